package cfn

import (
	"bytes"
	"errors"
	"math/big"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/value"
)

// kind of an AST node.
type kind int

const (
	kScalar kind = iota
	kMap
	kList
	kFunc // an intrinsic function call: {"Fn::X": arg}, {"Ref": x} or a short tag
)

// node is a template value with its position. Its dotted path is not stored: a node keeps
// its parent and its key or index there, and path() builds the text when a diagnostic needs
// it, so converting a document is linear in its size however deep it is.
type node struct {
	kind  kind
	lit   cty.Value    // kScalar
	text  string       // kScalar: as written
	keys  []string     // kMap, in source order
	krngs []diag.Range // kMap: where each key is written
	vals  []*node      // kMap values by keys, kList elements
	fn    string       // kFunc: "Ref", "Condition", "Fn::Join", ...
	arg   *node        // kFunc
	rng   diag.Range
	place
}

// place is where a node sits in the document: below up (a map, a list or a function call),
// at key (a map key or, below a call, the function's name) or at index idx of a list. The
// top of the document has no up.
type place struct {
	up  *node
	key string
	idx int
}

// path returns the dotted path of n ("Resources.Bucket.Properties.Tags[0].Key").
func (n *node) path() string {
	if n == nil {
		return ""
	}
	var chain []*node
	for c := n; c.up != nil; c = c.up {
		chain = append(chain, c)
	}
	var b strings.Builder
	for i := len(chain) - 1; i >= 0; i-- {
		c := chain[i]
		if c.up.kind == kList {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(c.idx))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(c.key)
	}
	return b.String()
}

// index returns the position of key in a map node, or -1.
func (n *node) index(key string) int {
	if n == nil || n.kind != kMap {
		return -1
	}
	for i, k := range n.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// get returns the value of key in a map node.
func (n *node) get(key string) *node {
	if n == nil || n.kind != kMap {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// mapKeys returns the keys of a map node (none for anything else).
func (n *node) mapKeys() []string {
	if n == nil || n.kind != kMap {
		return nil
	}
	return n.keys
}

// keyRange returns where key i of a map node is written: where a person looks for a named
// parameter, resource or output.
func (n *node) keyRange(i int) diag.Range {
	if i < len(n.krngs) {
		return n.krngs[i]
	}
	return n.rng
}

// keyRangeOf returns where key is written in a map node, or the node's range.
func (n *node) keyRangeOf(key string) diag.Range {
	if i := n.index(key); i >= 0 {
		return n.keyRange(i)
	}
	return n.rng
}

// isString reports whether n is a literal string.
func (n *node) isString() bool {
	return n != nil && n.kind == kScalar && !n.lit.IsNull() && n.lit.Type() == cty.String
}

// str returns a scalar's text (a number as written, a boolean as true or false), and whether
// n is a scalar other than null.
func (n *node) str() (string, bool) {
	if n == nil || n.kind != kScalar || n.lit.IsNull() {
		return "", false
	}
	switch n.lit.Type() {
	case cty.String:
		return n.lit.AsString(), true
	case cty.Number:
		if n.text != "" {
			return n.text, true // "1.50" stays "1.50" as a parameter value
		}
		return value.FormatNumber(n.lit.AsBigFloat()), true
	case cty.Bool:
		return strconv.FormatBool(n.lit.True()), true
	}
	return "", false
}

// decoder turns yaml nodes into AST nodes, collecting diagnostics.
type decoder struct {
	file  string
	diags diag.Diagnostics
	bud   *budget.Budget // the request's bounds: nesting depth and YAML alias expansion
	deep  bool           // the depth limit was reported
}

func (d *decoder) rng(y *yaml.Node) diag.Range {
	return diag.Range{Filename: d.file, Line: y.Line, Column: y.Column}
}

func (d *decoder) errf(y *yaml.Node, n *node, format string, args ...any) {
	d.diags = d.diags.Append(diag.Errorf(d.rng(y), n.path(), format, args...))
}

// parseDocument decodes JSON or YAML source to an AST. Before anything is built it checks
// the document against the budget: a JSON document's nesting by a scan of its brackets and
// the text's nodes by a scan of its indicators (see budget.YAMLNodeBound), then the nodes the YAML
// document expands to (aliases and merge keys followed, without expanding them) and their
// depth. A document over a limit is refused with one diagnostic.
func (d *decoder) parseDocument(src []byte) *node {
	// Brackets bound a JSON document's depth, and a YAML document's flow collections: refuse a
	// deep one before yaml.v3 recurses into it (it stops only at 10,000 levels).
	if depth, line, col := budget.BracketDepth(src, d.bud.Limits().Depth); d.bud.Depth(depth) != nil {
		d.over(diag.Range{Filename: d.file, Line: line, Column: col}, d.bud.Depth(depth))
		return nil
	}
	if t := bytes.TrimSpace(src); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		if t[0] == '{' {
			// JSON allows tabs where YAML does not; in JSON a raw tab can only be white space.
			src = bytes.ReplaceAll(src, []byte("\t"), []byte(" "))
		}
	}
	if err := budget.YAMLTooBig(src, d.bud.Limits(), "the template's YAML nodes"); err != nil {
		d.over(diag.Range{Filename: d.file, Line: 1, Column: 1}, err)
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		d.diags = d.diags.Append(d.syntaxError(err))
		return nil
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		d.diags = d.diags.Append(diag.Errorf(diag.Range{Filename: d.file}, "", "template is empty"))
		return nil
	}
	if err := budget.YAMLNodes(d.bud.Meter(), &doc); err != nil {
		at := doc.Content[0]
		var ne *budget.YAMLNodeError
		if errors.As(err, &ne) && ne.Node != nil && ne.Node.Line > 0 {
			at = ne.Node
		}
		d.over(d.rng(at), err)
		return nil
	}
	root := d.convert(doc.Content[0], place{}, 0)
	if d.deep {
		return nil // what is below the limit is not there: do not report what it lacks
	}
	return root
}

// over reports a budget the document exceeds.
func (d *decoder) over(rng diag.Range, err error) {
	d.diags = d.diags.Append(diag.Errorf(rng, "", "%s", budget.Named(err, "the template's nesting")))
}

// syntaxError turns a yaml.v3 error ("yaml: line 3: ...") into a diagnostic at that line.
// yaml.v3 counts lines from 0 in its parser errors ("did not find expected ...") and from 1
// in its scanner errors.
func (d *decoder) syntaxError(err error) diag.Diagnostic {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, after, ok := strings.Cut(rest, ": "); ok {
			if l, err := strconv.Atoi(n); err == nil {
				line, msg = l, after
				if strings.HasPrefix(msg, "did not find expected") {
					line++
				}
			}
		}
	}
	return diag.Errorf(diag.Range{Filename: d.file, Line: line}, "", "invalid template syntax: %s", msg)
}

// convert builds the AST of y at place at, depth levels below the top. parseDocument has
// checked the document's expansion and depth; convert checks the depth again before each
// level, so no document makes it recurse past the limit.
func (d *decoder) convert(y *yaml.Node, at place, depth int) *node {
	n := &node{rng: d.rng(y), place: at}
	if err := d.bud.Depth(depth); err != nil {
		if !d.deep {
			d.deep = true
			d.over(n.rng, err)
		}
		n.lit = cty.NullVal(cty.DynamicPseudoType)
		return n
	}
	if y.Kind == yaml.AliasNode {
		return d.convert(y.Alias, at, depth+1)
	}
	if short := y.Tag; strings.HasPrefix(short, "!") && !strings.HasPrefix(short, "!!") {
		fn := "Fn::" + short[1:]
		if short == "!Ref" || short == "!Condition" {
			fn = short[1:]
		}
		inner := *y
		inner.Tag = ""
		if y.Kind == yaml.ScalarNode {
			inner.Tag = "!!str"
		}
		n.kind, n.fn = kFunc, fn
		n.arg = d.convert(&inner, place{up: n, key: fn}, depth+1)
		return n
	}
	switch y.Kind {
	case yaml.MappingNode:
		n.kind = kMap
		seen := map[string]bool{}
		for i := 0; i+1 < len(y.Content); i += 2 {
			k := y.Content[i].Value
			if seen[k] {
				d.errf(y.Content[i], &node{place: place{up: n, key: k}}, "duplicate key %q", k)
				continue
			}
			seen[k] = true
			n.keys = append(n.keys, k)
			n.krngs = append(n.krngs, d.rng(y.Content[i]))
			n.vals = append(n.vals, d.convert(y.Content[i+1], place{up: n, key: k}, depth+1))
		}
		// {"Condition": name} is a function only where a condition is expected (see cond): a
		// property or an IAM statement may well have a single key called Condition.
		if len(n.keys) == 1 && (n.keys[0] == "Ref" || strings.HasPrefix(n.keys[0], "Fn::")) {
			// The call takes the map's place; its argument's path stays "...Fn::X".
			n.kind, n.fn, n.arg = kFunc, n.keys[0], n.vals[0]
			n.keys, n.krngs, n.vals = nil, nil, nil
		}
	case yaml.SequenceNode:
		n.kind = kList
		for i, c := range y.Content {
			n.vals = append(n.vals, d.convert(c, place{up: n, idx: i}, depth+1))
		}
	case yaml.ScalarNode:
		n.kind = kScalar
		n.lit, n.text = d.scalar(y, n), y.Value
	default:
		d.errf(y, n, "unsupported value")
		n.lit = cty.NullVal(cty.DynamicPseudoType)
	}
	return n
}

func (d *decoder) scalar(y *yaml.Node, n *node) cty.Value {
	switch y.ShortTag() {
	case "!!null":
		return cty.NullVal(cty.DynamicPseudoType)
	case "!!bool":
		var b bool
		if err := y.Decode(&b); err == nil {
			return cty.BoolVal(b)
		}
	case "!!int", "!!float":
		s := strings.ReplaceAll(y.Value, "_", "")
		if f, _, err := big.ParseFloat(s, 0, 512, big.ToNearestEven); err == nil {
			if !value.NumberInRange(f) {
				d.errf(y, n, "invalid number %q: out of range (at most about 1e330 in magnitude, and not nearer 0 than 1e-330)", y.Value)
				return cty.StringVal(y.Value)
			}
			return cty.NumberVal(f)
		}
		if i, err := strconv.ParseInt(s, 0, 64); err == nil {
			return cty.NumberIntVal(i)
		}
		d.errf(y, n, "invalid number %q", y.Value)
	}
	return cty.StringVal(y.Value)
}
