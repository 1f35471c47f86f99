package pulumiyaml

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/pulumi/pulumi-yaml/pkg/pulumiyaml/syntax"
	"github.com/pulumi/pulumi-yaml/pkg/pulumiyaml/syntax/encoding"
	"github.com/zclconf/go-cty/cty"
	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
)

// decodeFile decodes one YAML file into Pulumi's syntax nodes, which keep file:line:col. The
// request's budget bounds it first, as the CloudFormation decoder's: flow collections nested
// deeper than its depth (the YAML decoder stops only at 10,000 levels) and text that may hold
// far more nodes than its alias-node limit are refused before decoding.
func decodeFile(bud *budget.Budget, name, text string) (*syntax.ObjectNode, diag.Diagnostics) {
	src := []byte(text)
	if depth, line, col := budget.BracketDepth(src, bud.Limits().Depth); bud.Depth(depth) != nil {
		return nil, diag.Diagnostics{diag.Errorf(diag.Range{Filename: name, Line: line, Column: col}, "", "%s",
			budget.Named(bud.Depth(depth), "the program's nesting"))}
	}
	if err := budget.YAMLTooBig(src, bud.Limits(), name+"'s YAML nodes"); err != nil {
		return nil, diag.Diagnostics{diag.Errorf(diag.Range{Filename: name, Line: 1, Column: 1}, "", "%s", err)}
	}
	// Decoded in two steps (encoding.DecodeYAML's) so that the budget sees the YAML nodes
	// first: their count and their nesting, block style included, which the text checks above
	// cannot see.
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(src)).Decode(&doc); err != nil {
		return nil, fromSyntax(name, syntax.Diagnostics{syntax.Error(nil, err.Error(), "")})
	}
	if len(doc.Content) == 0 {
		return nil, diag.Diagnostics{diag.Errorf(diag.Range{Filename: name}, "", "%s is empty", name)}
	}
	if err := budget.YAMLNodes(bud.Meter(), &doc); err != nil {
		at := doc.Content[0]
		var ne *budget.YAMLNodeError
		if errors.As(err, &ne) && ne.Node != nil && ne.Node.Line > 0 {
			at = ne.Node
		}
		return nil, diag.Diagnostics{diag.Errorf(diag.Range{Filename: name, Line: at.Line, Column: at.Column}, "", "%s",
			budget.Named(err, "the program's nesting"))}
	}
	n, sds := encoding.UnmarshalYAML(name, doc.Content[0], nil)
	ds := fromSyntax(name, sds)
	obj, ok := n.(*syntax.ObjectNode)
	if !ok {
		return nil, append(ds, diag.Errorf(diag.Range{Filename: name}, "", "Top level of '%s' must be an object", name))
	}
	return obj, ds
}

// fromSyntax maps Pulumi's diagnostics onto cairn's.
func fromSyntax(file string, sds syntax.Diagnostics) diag.Diagnostics {
	var ds diag.Diagnostics
	for _, d := range sds {
		rng := diag.Range{Filename: file}
		if d.Subject != nil {
			rng = toRange(d.Subject)
		} else if line, rest, ok := yamlLine(d.Summary); ok {
			// a syntax error from the YAML decoder names its line in the text only
			rng.Line, d.Summary = line, rest
		}
		sev := diag.Error
		if d.Severity == hcl.DiagWarning {
			sev = diag.Warning
		}
		ds = append(ds, diag.Diagnostic{Severity: sev, Summary: d.Summary, Detail: d.Detail, Range: rng})
	}
	return ds
}

// yamlLine splits "yaml: line 3: did not find ..." into 3 and the rest.
func yamlLine(msg string) (int, string, bool) {
	rest, ok := strings.CutPrefix(msg, "yaml: line ")
	if !ok {
		return 0, "", false
	}
	num, text, ok := strings.Cut(rest, ": ")
	n, err := strconv.Atoi(num)
	if !ok || err != nil {
		return 0, "", false
	}
	return n, "invalid YAML: " + text, true
}

func toRange(r *hcl.Range) diag.Range {
	if r == nil {
		return diag.Range{}
	}
	return diag.Range{Filename: r.Filename, Line: r.Start.Line, Column: r.Start.Column}
}

func rangeOf(n syntax.Node) diag.Range {
	if n == nil || n.Syntax() == nil {
		return diag.Range{}
	}
	return toRange(n.Syntax().Range())
}

// entry is one key of an object node with where it is.
type entry struct {
	key   string
	value syntax.Node
	at    where // the key's range, the value's path
}

func entries(obj *syntax.ObjectNode, path string) []entry {
	if obj == nil {
		return nil
	}
	out := make([]entry, 0, obj.Len())
	for i := 0; i < obj.Len(); i++ {
		kv := obj.Index(i)
		if kv.Key == nil {
			continue // a non-string key: the decoder has said so
		}
		out = append(out, entry{key: kv.Key.Value(), value: kv.Value, at: where{rng: rangeOf(kv.Key), path: join(path, kv.Key.Value())}})
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// toExpr turns a syntax node into an expression, checking built-in calls.
func toExpr(n syntax.Node, path string, ranges map[string]diag.Range, prefix string) (expr, diag.Diagnostics) {
	at := where{rng: rangeOf(n), path: path}
	if ranges != nil {
		ranges[prefix] = at.rng
	}
	switch n := n.(type) {
	case nil, *syntax.NullNode:
		return literal{cty.NullVal(cty.DynamicPseudoType)}, nil
	case *syntax.BooleanNode:
		return literal{cty.BoolVal(n.Value())}, nil
	case *syntax.NumberNode:
		return literal{number(n)}, nil
	case *syntax.StringNode:
		return parseString(n.Value(), at)
	case *syntax.ListNode:
		var ds diag.Diagnostics
		l := listExpr{elems: make([]expr, n.Len())}
		for i := range l.elems {
			suffix := "[" + strconv.Itoa(i) + "]"
			e, d := toExpr(n.Index(i), path+suffix, ranges, prefix+suffix)
			ds = append(ds, d...)
			l.elems[i] = e
		}
		return l, ds
	case *syntax.ObjectNode:
		es := entries(n, path)
		if len(es) == 1 && strings.HasPrefix(strings.ToLower(es[0].key), "fn::") {
			if isInvoke(es[0].key) {
				return toInvoke(es[0]) // invoke.go
			}
			if kind := resourceInfoKind(es[0].key); kind != "" {
				return toResourceInfo(es[0], kind) // resinfo.go
			}
			fn := where{rng: es[0].at.rng, path: es[0].at.path}
			ds := checkCall(es[0].key, fn)
			arg, d := toExpr(es[0].value, es[0].at.path, nil, "")
			ds = append(ds, d...)
			return call{name: strings.ToLower(es[0].key), arg: arg, where: fn}, ds
		}
		var ds diag.Diagnostics
		o := objectExpr{}
		for _, e := range es {
			if strings.HasPrefix(strings.ToLower(e.key), "fn::") {
				ds = append(ds, diag.Errorf(e.at.rng, e.at.path, "a built-in function call (%s) must be the only key of its object", e.key))
			}
			x, d := toExpr(e.value, e.at.path, ranges, join(prefix, e.key))
			ds = append(ds, d...)
			o.keys = append(o.keys, strings.ReplaceAll(e.key, "$${", "${")) // keys are literal text, escapes as in values
			o.elems = append(o.elems, x)
		}
		return o, ds
	}
	return literal{cty.NullVal(cty.DynamicPseudoType)}, diag.Diagnostics{diag.Errorf(at.rng, path, "unexpected value")}
}

// number keeps integers exact: YAML's 3 is 3, not 3.0000001.
func number(n *syntax.NumberNode) cty.Value {
	if ys, ok := n.Syntax().(encoding.YAMLSyntax); ok && ys.Node != nil {
		if i, err := strconv.ParseInt(ys.Node.Value, 0, 64); err == nil {
			return cty.NumberIntVal(i)
		}
	}
	if f := n.Value(); !math.IsNaN(f) && !math.IsInf(f, 0) {
		return cty.NumberFloatVal(f)
	}
	// .nan and .inf are YAML numbers no cairn value can hold: they stay the text written, and
	// whatever needs a number refuses them.
	if ys, ok := n.Syntax().(encoding.YAMLSyntax); ok && ys.Node != nil {
		return cty.StringVal(ys.Node.Value)
	}
	return cty.StringVal(strconv.FormatFloat(n.Value(), 'g', -1, 64))
}

// plain decodes a node that must not hold expressions (config values in a stack file).
// Collections are walked here, scalars decoded by toExpr (decoding a whole collection there
// at every level would cost the cube of its depth).
func plain(n syntax.Node) cty.Value {
	switch n := n.(type) {
	case *syntax.ListNode:
		if n.Len() == 0 {
			return cty.EmptyTupleVal
		}
		vals := make([]cty.Value, n.Len())
		for i := range vals {
			vals[i] = plain(n.Index(i))
		}
		return cty.TupleVal(vals)
	case *syntax.ObjectNode:
		attrs := map[string]cty.Value{}
		for _, e := range entries(n, "") {
			attrs[e.key] = plain(e.value)
		}
		return cty.ObjectVal(attrs)
	}
	x, _ := toExpr(n, "", nil, "")
	if l, ok := x.(literal); ok {
		return l.v
	}
	if s, ok := n.(*syntax.StringNode); ok {
		return cty.StringVal(s.Value()) // ${...} in a stack file is text
	}
	return cty.NullVal(cty.DynamicPseudoType)
}
