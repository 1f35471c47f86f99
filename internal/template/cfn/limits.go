package cfn

import (
	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/internal/budget"
)

// parseFactor is how many more nodes than the alias-node limit the text of a document may
// seem to hold (see nodeBound) before it is refused unparsed. yaml.v3 builds a node of about
// 250 bytes for each node of the text before anything can be counted: a 10 MB flow list is 5
// million nodes, 1.2 GB. The bound counts an ARN's colons and a description's commas as
// nodes too, hence the margin.
const parseFactor = 4

// nodeBound returns an upper bound of the nodes yaml.v3 makes of a YAML or JSON text, found by
// one scan: besides the document and its top node, every node follows a line break, a flow
// indicator ([ { ,), a colon, or a block indicator (- ?) followed by white space. Each
// indicator is weighed by the nodes it may bring (a colon a key and its value, a comma or a
// { in a flow mapping a key and its implicit null). Quotes are not followed, so text inside
// strings is counted too: the bound may be well above the truth, never below it.
func nodeBound(src []byte) int64 {
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

// tooManyNodes returns an *budget.Exceeded when src may hold more than parseFactor times the
// alias-node limit, so that it is refused before yaml.v3 builds its nodes.
func tooManyNodes(src []byte, lim budget.Limits) error {
	if lim.AliasNodes < 0 || nodeBound(src) <= parseFactor*lim.AliasNodes {
		return nil
	}
	return &budget.Exceeded{Limit: "alias-nodes", Max: lim.AliasNodes, What: "the template's YAML nodes"}
}

// jsonDepth returns the deepest nesting of [ and { in src outside JSON strings, found by one
// scan without decoding anything, and the line and column of the first bracket deeper than
// limit (0, 0 if none is). For JSON it is the document's depth; for YAML flow collections an
// upper bound, which the check of the decoded nodes makes exact.
func jsonDepth(src []byte, limit int) (max, line, col int) {
	depth, inStr := 0, false
	l, lineStart := 1, 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\n':
			l, lineStart = l+1, i+1
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '[' || c == '{':
			depth++
			if depth > max {
				max = depth
				if limit >= 0 && depth > limit && line == 0 {
					line, col = l, i-lineStart+1
				}
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return max, line, col
}

// locate returns the node to blame when a document fails budget.YAMLNodes: the alias that
// refers to a node containing it, the alias (or node) through which the nesting passes the
// depth limit, or the alias (or node) whose expansion passes the alias-node limit. It walks
// the document once, as YAMLNodes does (each node counted once, counts reused at aliases),
// and is only called when YAMLNodes has refused the document. It returns the document when
// it finds nothing to blame.
func locate(doc *yaml.Node, lim budget.Limits) *yaml.Node {
	l := locator{lim: lim, memo: map[*yaml.Node]int64{}, active: map[*yaml.Node]bool{}}
	l.count(doc, 0)
	if l.found != nil {
		return l.found
	}
	if len(doc.Content) > 0 {
		return doc.Content[0]
	}
	return doc
}

type locator struct {
	lim    budget.Limits
	memo   map[*yaml.Node]int64
	active map[*yaml.Node]bool
	alias  *yaml.Node // the innermost alias being followed
	found  *yaml.Node
}

// blame returns the innermost alias being followed, or y.
func (l *locator) blame(y *yaml.Node) *yaml.Node {
	if y.Kind == yaml.AliasNode || l.alias == nil {
		return y
	}
	return l.alias
}

// count returns the nodes y expands to; it sets found and returns -1 once something is to blame.
func (l *locator) count(y *yaml.Node, depth int) int64 {
	if y == nil {
		return 0
	}
	if l.lim.Depth >= 0 && depth > l.lim.Depth {
		l.found = l.blame(y)
		return -1
	}
	if n, ok := l.memo[y]; ok {
		return n
	}
	if l.active[y] {
		l.found = l.alias
		return -1
	}
	l.active[y] = true
	defer delete(l.active, y)
	var n int64 = 1
	if y.Kind == yaml.AliasNode {
		outer := l.alias
		l.alias = y
		n = l.count(y.Alias, depth+1)
		l.alias = outer
		if n < 0 {
			return -1
		}
	}
	for _, ch := range y.Content {
		sub := l.count(ch, depth+1)
		if sub < 0 {
			return -1
		}
		if n += sub; l.lim.AliasNodes >= 0 && n > l.lim.AliasNodes {
			l.found = l.blame(ch)
			return -1
		}
	}
	l.memo[y] = n
	return n
}
