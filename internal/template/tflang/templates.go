package tflang

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/customdecode"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/cairn-dev/cairn/internal/budget"
)

// templatefile and templatestring parse a template at evaluation time: the text comes from a
// file or a value, not from the configuration's sources, so it goes through the same guard
// (checkSource) before hclsyntax sees it, and its for expressions and interpolations are
// metered (rewrite) as the configuration's are. Both are terraform's functions, messages and
// all; terraform renders a template file twice (once for its type); cairn renders it once.

// meterNow is the meter of the evaluation the table is bound to; a fresh one with the default
// limits when the table has none.
func (c sentFiles) meterNow() *budget.Meter {
	if c.meter != nil {
		if m := c.meter(); m != nil {
			return m
		}
	}
	return budget.From(context.Background()).Meter()
}

// parseTemplate parses src, named name, as a template, after the guard.
func parseTemplate(src []byte, name string, m *budget.Meter) (hclsyntax.Expression, error) {
	s, ds := checkSource(src, name, hcl.InitialPos, lexTemplate, m, 0)
	if ds.HasErrors() {
		if err := limitErr(ds); err != nil {
			return nil, err
		}
		return nil, ds
	}
	expr, ds := hclsyntax.ParseTemplate(s.src, name, hcl.InitialPos)
	if ds.HasErrors() {
		return nil, ds
	}
	rewrite(expr, s)
	return expr, nil
}

// renderTemplate evaluates a parsed template with vars and fns (see restricted).
func renderTemplate(expr hclsyntax.Expression, vars cty.Value, fns map[string]function.Function) (cty.Value, error) {
	if ty := vars.Type(); !ty.IsMapType() && !ty.IsObjectType() {
		return cty.DynamicVal, function.NewArgErrorf(1, "invalid vars value: must be a map")
	}
	ctx := &hcl.EvalContext{Variables: vars.AsValueMap()}
	for n := range ctx.Variables {
		if !hclsyntax.ValidIdentifier(n) {
			return cty.DynamicVal, function.NewArgErrorf(1, "invalid template variable name %q: must start with a letter, followed by zero or more letters, digits, and underscores", n)
		}
	}
	for _, t := range expr.Variables() {
		if _, ok := ctx.Variables[t.RootName()]; !ok {
			return cty.DynamicVal, function.NewArgErrorf(1, "vars map does not contain key %q, referenced at %s", t.RootName(), t[0].SourceRange())
		}
	}
	// hcl's unknown-function message weighs the name against every function's, at a cost of
	// its length each time the call is evaluated (in a loop, thousands of times): unknown
	// names are reported before rendering instead, cheaply (nameSuggestion), even where the
	// template would not reach them
	if ds := checkCalls(expr, false); ds.HasErrors() {
		return cty.DynamicVal, ds
	}
	ctx.Functions = fns
	v, ds := expr.Value(ctx)
	if err := limitErr(ds); err != nil {
		return cty.DynamicVal, err // the limit's own diagnostic, not one inside another
	}
	if ds.HasErrors() {
		return cty.DynamicVal, ds
	}
	if v.IsNull() {
		return cty.DynamicVal, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Template result is null",
			Detail: "The result of the template is null, which is not a valid result for a templatestring call.", Subject: expr.Range().Ptr()}}
	}
	return v, nil
}

// fsFunctionNames are the functions a templatestring template may not call.
var fsFunctionNames = map[string]bool{"file": true, "fileexists": true, "fileset": true, "filebase64": true,
	"filebase64sha256": true, "filebase64sha512": true, "filemd5": true, "filesha1": true, "filesha256": true,
	"filesha512": true, "templatefile": true}

// restricted is fns with the template functions (and the filesystem ones unless allowFS)
// refusing to be called, with terraform's messages.
func restricted(fns map[string]function.Function, allowFS bool) map[string]function.Function {
	out := make(map[string]function.Function, len(fns))
	for name, f := range fns {
		plain := strings.TrimPrefix(name, "core::")
		msg := ""
		switch {
		case plain == "templatefile" || plain == "templatestring":
			msg = fmt.Sprintf("cannot recursively call %s from inside another template function", plain)
		case !allowFS && fsFunctionNames[plain]:
			msg = fmt.Sprintf("cannot use filesystem access functions like %s in templatestring templates; consider passing the function result as a template variable instead", plain)
		}
		if msg != "" {
			f = function.New(&function.Spec{Params: f.Params(), VarParam: f.VarParam(),
				Type: func([]cty.Value) (cty.Type, error) { return cty.NilType, fmt.Errorf("%s", msg) }})
		}
		out[name] = f
	}
	return out
}

// templateFileFunc is templatefile(path, vars): the file rendered as a template with vars
// and the functions of table. Its type is the rendered value's, so it is dynamic until the
// call: rendering happens once, in Impl.
func (c sentFiles) templateFileFunc(table func() map[string]function.Function) function.Function {
	fns := sync.OnceValue(func() map[string]function.Function { return restricted(table(), true) })
	// a file's template is parsed (and its guard charged) once: the files do not change, and
	// a parsed template is not changed by rendering it
	var mu sync.Mutex
	parsed := map[string]hclsyntax.Expression{}
	return function.New(&function.Spec{
		Params: []function.Parameter{pathParam, {Name: "vars", Type: cty.DynamicPseudoType, AllowMarked: true, AllowUnknown: true}},
		Type:   function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
			p, pmarks := args[0].Unmark()
			vars, vmarks := args[1].UnmarkDeep()
			if !p.IsKnown() || !vars.IsKnown() {
				return cty.UnknownVal(retType).WithMarks(pmarks, vmarks), nil
			}
			k, _ := c.key(p.AsString())
			mu.Lock()
			expr, ok := parsed[k]
			mu.Unlock()
			if !ok {
				src, ok := c.read(p.AsString())
				if !ok {
					return cty.DynamicVal, function.NewArgError(0, c.readError(p.AsString(), pmarks))
				}
				if !utf8.Valid(src) {
					return cty.DynamicVal, fmt.Errorf("contents of %s are not valid UTF-8", shown(p.AsString(), pmarks))
				}
				var err error
				if expr, err = parseTemplate(src, p.AsString(), c.meterNow()); err != nil {
					return cty.DynamicVal, err
				}
				mu.Lock()
				parsed[k] = expr
				mu.Unlock()
			}
			v, err := renderTemplate(expr, vars, fns())
			return v.WithMarks(pmarks, vmarks), err
		},
	})
}

// templateStringName is the file name of a templatestring template in messages.
const templateStringName = "<templatestring argument>"

// templateStringFunc is templatestring(template, vars): a string value rendered as a
// template. As terraform, the template must be given as a reference (local.t,
// var.t["x"]), not written inline.
func (c sentFiles) templateStringFunc(table func() map[string]function.Function) function.Function {
	fns := sync.OnceValue(func() map[string]function.Function { return restricted(table(), false) })
	return function.New(&function.Spec{
		Params: []function.Parameter{
			{Name: "template", Type: customdecode.ExpressionClosureType},
			{Name: "vars", Type: cty.DynamicPseudoType},
		},
		Type:         function.StaticReturnType(cty.String),
		RefineResult: func(b *cty.RefinementBuilder) *cty.RefinementBuilder { return b.NotNull() },
		Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
			closure := customdecode.ExpressionClosureFromVal(args[0])
			if err := templateStringArg(closure.Expression); err != nil {
				return cty.UnknownVal(retType), err
			}
			tv, ds := closure.Value()
			if err := limitErr(ds); err != nil {
				return cty.UnknownVal(retType), err
			}
			if ds.HasErrors() {
				return cty.UnknownVal(retType), function.NewArgErrorf(0, "invalid template expression: %s", ds.Error())
			}
			if !tv.IsKnown() {
				return cty.UnknownVal(retType), nil
			}
			if tv.Type() != cty.String || tv.IsNull() {
				return cty.UnknownVal(retType), function.NewArgErrorf(0, "invalid template value: a string is required")
			}
			tv, marks := tv.Unmark()
			expr, err := parseTemplate([]byte(tv.AsString()), templateStringName, c.meterNow())
			if budget.IsExceeded(err) {
				return cty.UnknownVal(retType), err
			}
			if err != nil {
				return cty.UnknownVal(retType), function.NewArgErrorf(0, "invalid template: %s", err)
			}
			v, err := renderTemplate(expr, args[1], fns())
			if err != nil {
				return cty.UnknownVal(retType), err
			}
			if v, err = convert.Convert(v, cty.String); err != nil {
				return cty.UnknownVal(retType), fmt.Errorf("invalid template result: %s", err)
			}
			return v.WithMarks(marks), nil
		},
	})
}

// templateStringArg refuses a template argument that is not a reference, with terraform's
// messages for each mistake.
func templateStringArg(x hcl.Expression) error {
	if p, ok := x.(*hclsyntax.ParenthesesExpr); ok {
		if t, ok := p.Expression.(*hclsyntax.TemplateExpr); ok && t.SrcRange == p.SrcRange {
			x = t // a long template the guard decoded (see source.fast)
		}
	}
	switch x := x.(type) {
	case *hclsyntax.TemplateWrapExpr:
		return function.NewArgErrorf(0, "invalid template expression: templatestring is only for rendering templates retrieved dynamically from elsewhere; to treat the inner expression as template syntax, write the reference expression directly without any template interpolation syntax")
	case *hclsyntax.TemplateExpr:
		if len(x.Parts) == 1 {
			if _, lit := x.Parts[0].(*hclsyntax.LiteralValueExpr); lit {
				return function.NewArgErrorf(0, "invalid template expression: templatestring is only for rendering templates retrieved dynamically from elsewhere, and so does not support providing a literal template; consider using a template string expression instead")
			}
		}
		return function.NewArgErrorf(0, "invalid template expression: templatestring is only for rendering templates retrieved dynamically from elsewhere; to render an inline template, consider using a plain template string expression")
	}
	if !isReference(x) {
		return function.NewArgErrorf(0, "invalid template expression: must be a direct reference to a single string from elsewhere, containing valid Terraform template syntax")
	}
	return nil
}

// isReference reports whether x names a value: a traversal, possibly indexed or splatted.
func isReference(x hcl.Expression) bool {
	switch x := x.(type) {
	case *hclsyntax.ScopeTraversalExpr:
		return true
	case *hclsyntax.RelativeTraversalExpr:
		return isReference(x.Source)
	case *hclsyntax.IndexExpr:
		return isReference(x.Collection)
	case *hclsyntax.SplatExpr:
		return isReference(x.Source)
	case meteredExpr:
		return isReference(x.Args[0])
	}
	return false
}
