package cfn

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"gopkg.in/yaml.v3"

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

// node is a template value with its position and path.
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
	path  string
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

func child(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// decoder turns yaml nodes into AST nodes, collecting diagnostics.
type decoder struct {
	file  string
	diags diag.Diagnostics
}

func (d *decoder) rng(y *yaml.Node) diag.Range {
	return diag.Range{Filename: d.file, Line: y.Line, Column: y.Column}
}

func (d *decoder) errf(y *yaml.Node, path, format string, args ...any) {
	d.diags = d.diags.Append(diag.Errorf(d.rng(y), path, format, args...))
}

// parseDocument decodes JSON or YAML source to an AST.
func (d *decoder) parseDocument(src []byte) *node {
	if t := strings.TrimSpace(string(src)); strings.HasPrefix(t, "{") {
		// JSON allows tabs where YAML does not; in JSON a raw tab can only be white space.
		src = []byte(strings.ReplaceAll(string(src), "\t", " "))
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
	return d.convert(doc.Content[0], "")
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

func (d *decoder) convert(y *yaml.Node, path string) *node {
	if y.Kind == yaml.AliasNode {
		return d.convert(y.Alias, path)
	}
	n := &node{rng: d.rng(y), path: path}
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
		n.arg = d.convert(&inner, child(path, fn))
		return n
	}
	switch y.Kind {
	case yaml.MappingNode:
		n.kind = kMap
		seen := map[string]bool{}
		for i := 0; i+1 < len(y.Content); i += 2 {
			k := y.Content[i].Value
			if seen[k] {
				d.errf(y.Content[i], child(path, k), "duplicate key %q", k)
				continue
			}
			seen[k] = true
			n.keys = append(n.keys, k)
			n.krngs = append(n.krngs, d.rng(y.Content[i]))
			n.vals = append(n.vals, d.convert(y.Content[i+1], child(path, k)))
		}
		// {"Condition": name} is a function only where a condition is expected (see cond): a
		// property or an IAM statement may well have a single key called Condition.
		if len(n.keys) == 1 && (n.keys[0] == "Ref" || strings.HasPrefix(n.keys[0], "Fn::")) {
			return &node{kind: kFunc, fn: n.keys[0], arg: n.vals[0], rng: n.rng, path: path}
		}
	case yaml.SequenceNode:
		n.kind = kList
		for i, c := range y.Content {
			n.vals = append(n.vals, d.convert(c, fmt.Sprintf("%s[%d]", path, i)))
		}
	case yaml.ScalarNode:
		n.kind = kScalar
		n.lit, n.text = d.scalar(y, path), y.Value
	default:
		d.errf(y, path, "unsupported value")
		n.lit = cty.NullVal(cty.DynamicPseudoType)
	}
	return n
}

func (d *decoder) scalar(y *yaml.Node, path string) cty.Value {
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
			return cty.NumberVal(f)
		}
		if i, err := strconv.ParseInt(s, 0, 64); err == nil {
			return cty.NumberIntVal(i)
		}
		d.errf(y, path, "invalid number %q", y.Value)
	}
	return cty.StringVal(y.Value)
}
