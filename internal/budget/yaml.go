package budget

import (
	"errors"

	"gopkg.in/yaml.v3"
)

// YAMLNodes charges the nodes a YAML document expands to, aliases and merge keys followed, to
// m's alias-node budget, and checks its nesting depth. It never expands anything: it counts
// each node once and reuses the count wherever an alias points at it, so a billion laughs is
// refused in time linear in its size. A recursive alias is an error.
func YAMLNodes(m *Meter, root *yaml.Node) error {
	c := yamlCounter{m: m, memo: map[*yaml.Node]yamlSize{}, active: map[*yaml.Node]bool{}}
	sz, err := c.size(root, 0)
	if err != nil {
		return err
	}
	// What aliases add: the expanded document less the nodes written in it (which the text's
	// size bounds already, see YAMLTooBig).
	if err := m.AliasNodes(sz.nodes - c.written); err != nil {
		return &YAMLNodeError{Node: root, Err: err}
	}
	return nil
}

// YAMLNodeError is a limit a YAML document exceeds, with the node to blame: the innermost alias
// through which the limit was reached, or the node itself when no alias was followed.
type YAMLNodeError struct {
	Node *yaml.Node
	Err  error
}

func (e *YAMLNodeError) Error() string { return e.Err.Error() }
func (e *YAMLNodeError) Unwrap() error { return e.Err }

// yamlParseFactor is how many more nodes than the alias-node limit the text of a document may
// seem to hold (see YAMLNodeBound) before it is refused unparsed. yaml.v3 builds a node of
// about 250 bytes for each node of the text before anything can be counted: a 10 MB flow list
// is 5 million nodes, 1.2 GB. The bound counts an ARN's colons and a description's commas as
// nodes too, hence the margin.
const yamlParseFactor = 4

// YAMLNodeBound returns an upper bound of the nodes yaml.v3 makes of a YAML or JSON text,
// found by one scan: besides the document and its top node, every node follows a line break,
// a flow indicator ([ { ,), a colon, or a block indicator (- ?) followed by white space. Each
// indicator is weighed by the nodes it may bring (a colon a key and its value, a comma or a {
// in a flow mapping a key and its implicit null). Quotes are not followed, so text inside
// strings is counted too: the bound may be well above the truth, never below it.
func YAMLNodeBound(src []byte) int64 {
	n := int64(2)
	for i, c := range src {
		switch c {
		case '\n', '[':
			n++
		case ',', ':':
			n += 2
		case '{':
			n += 3
		case '-', '?':
			if i+1 == len(src) || src[i+1] == ' ' || src[i+1] == '\t' || src[i+1] == '\n' || src[i+1] == '\r' {
				n += 2
			}
		}
	}
	return n
}

// YAMLTooBig returns an *Exceeded (what names the document) when src may hold far more nodes
// than lim's alias-node limit: the check to make before handing text to a YAML parser.
func YAMLTooBig(src []byte, lim Limits, what string) error {
	lim = lim.withDefaults()
	if lim.AliasNodes < 0 || YAMLNodeBound(src) <= yamlParseFactor*lim.AliasNodes {
		return nil
	}
	return &Exceeded{Limit: "alias-nodes", Max: lim.AliasNodes, What: what}
}

// YAMLText parses text as YAML (aliases unexpanded) and checks it with YAMLNodes, refusing
// unparsed a text too large to parse safely. Text that is not YAML is left for the real
// decoder to report.
func YAMLText(m *Meter, text string) error {
	if err := YAMLTooBig([]byte(text), m.b.lim, "YAML nodes"); err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil
	}
	return YAMLNodes(m, &doc)
}

type yamlCounter struct {
	m       *Meter
	memo    map[*yaml.Node]yamlSize
	active  map[*yaml.Node]bool
	alias   *yaml.Node // the innermost alias being followed
	written int64      // distinct nodes sized so far: the document's own, not alias-reached
}

// fail blames y, or the innermost alias being followed when y is reached through one.
func (c *yamlCounter) fail(y *yaml.Node, err error) error {
	if y.Kind != yaml.AliasNode && c.alias != nil {
		y = c.alias
	}
	return &YAMLNodeError{Node: y, Err: err}
}

// yamlSize is what a node expands to: its nodes, and its height (the depth it adds wherever an
// alias places it), so that nesting built from aliases is caught as well as written nesting.
type yamlSize struct{ nodes, height int64 }

// errRecursiveAlias is the error of an alias that contains itself.
var errRecursiveAlias = errors.New("a YAML alias refers to a node that contains it (a recursive alias)")

func (c *yamlCounter) size(y *yaml.Node, depth int) (yamlSize, error) {
	if y == nil {
		return yamlSize{}, nil
	}
	if err := c.m.b.Depth(depth); err != nil {
		return yamlSize{}, c.fail(y, err)
	}
	if sz, ok := c.memo[y]; ok {
		// Reached again through an alias: its subtree sits depth levels down here.
		if err := c.m.b.Depth(depth + int(sz.height)); err != nil {
			return yamlSize{}, c.fail(y, err)
		}
		return sz, nil
	}
	if c.active[y] {
		return yamlSize{}, &YAMLNodeError{Node: c.alias, Err: errRecursiveAlias}
	}
	c.active[y] = true
	defer delete(c.active, y)
	sz := yamlSize{nodes: 1}
	if y.Kind == yaml.AliasNode {
		outer := c.alias
		c.alias = y
		sub, err := c.size(y.Alias, depth+1)
		c.alias = outer
		if err != nil {
			return yamlSize{}, err
		}
		sz = yamlSize{nodes: sub.nodes, height: sub.height + 1}
	}
	for _, ch := range y.Content {
		sub, err := c.size(ch, depth+1)
		if err != nil {
			return yamlSize{}, err
		}
		sz.height = max(sz.height, sub.height+1)
		// sz.nodes - written never exceeds what aliases added so far: refusing on it is safe.
		if sz.nodes += sub.nodes; c.m.b.lim.AliasNodes >= 0 && sz.nodes-c.written > c.m.b.lim.AliasNodes {
			return yamlSize{}, c.fail(ch, &Exceeded{Limit: "alias-nodes", Max: c.m.b.lim.AliasNodes, What: "YAML aliases"})
		}
	}
	c.memo[y] = sz
	c.written++
	return sz, nil
}
