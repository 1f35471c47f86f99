package pulumiyaml

import (
	"maps"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// expr is a Pulumi YAML expression: a literal, a list or object of expressions, an
// interpolated string, a property access `${a.b[0]}` or a built-in call `fn::x`.
type expr interface {
	eval(ev *evaluator) (cty.Value, diag.Diagnostics)
	// accesses calls f for every property access inside, to find what the expression needs.
	accesses(f func(*access))
}

type where struct {
	rng  diag.Range
	path string // "resources.bucket.properties.tags[0]"
}

type literal struct{ v cty.Value }

func (l literal) eval(*evaluator) (cty.Value, diag.Diagnostics) { return l.v, nil }
func (literal) accesses(func(*access))                          {}

type listExpr struct{ elems []expr }

func (l listExpr) eval(ev *evaluator) (cty.Value, diag.Diagnostics) {
	if len(l.elems) == 0 {
		return cty.EmptyTupleVal, nil
	}
	var ds diag.Diagnostics
	vals := make([]cty.Value, len(l.elems))
	for i, e := range l.elems {
		v, d := e.eval(ev)
		ds = append(ds, d...)
		vals[i] = v
	}
	return cty.TupleVal(vals), ds
}

func (l listExpr) accesses(f func(*access)) {
	for _, e := range l.elems {
		e.accesses(f)
	}
}

type objectExpr struct {
	keys  []string
	elems []expr
}

func (o objectExpr) eval(ev *evaluator) (cty.Value, diag.Diagnostics) {
	if len(o.keys) == 0 {
		return cty.EmptyObjectVal, nil
	}
	var ds diag.Diagnostics
	attrs := make(map[string]cty.Value, len(o.keys))
	for i, e := range o.elems {
		v, d := e.eval(ev)
		ds = append(ds, d...)
		attrs[o.keys[i]] = v
	}
	return cty.ObjectVal(attrs), ds
}

func (o objectExpr) accesses(f func(*access)) {
	for _, e := range o.elems {
		e.accesses(f)
	}
}

// step is one step of a property access: .name or ["name"] (key) or [3] (index).
type step struct {
	key   string
	index int
	isIdx bool
}

// access is `${root.step...}`: root names a config value, a variable, a resource or `pulumi`.
type access struct {
	text  string // as written between ${ and }
	root  string
	steps []step
	where
	inv *invokeExpr // on the access an invoke makes to its own result (invoke.go)
}

func (a *access) accesses(f func(*access)) { f(a) }

func (a *access) eval(ev *evaluator) (cty.Value, diag.Diagnostics) {
	v, steps, ds := ev.root(a)
	if ds.HasErrors() {
		return cty.DynamicVal, ds
	}
	for _, st := range steps {
		var ok bool
		if v, ok = index(v, st); !ok {
			what := st.key
			if st.isIdx {
				what = strconv.Itoa(st.index)
			}
			return cty.DynamicVal, append(ds, diag.Errorf(a.rng, a.path, "${%s}: %s has no property or element %q", a.text, a.root, what))
		}
	}
	return v, ds
}

// index takes one step into v; an unknown v gives an unknown result, its marks kept.
func index(v cty.Value, st step) (cty.Value, bool) {
	v, marks := v.Unmark()
	if !v.IsKnown() {
		return cty.DynamicVal.WithMarks(marks), true
	}
	if v.IsNull() {
		return cty.NilVal, false
	}
	ty := v.Type()
	switch {
	case st.isIdx && (ty.IsListType() || ty.IsTupleType()):
		if st.index < 0 || st.index >= v.LengthInt() {
			return cty.NilVal, false
		}
		return v.Index(cty.NumberIntVal(int64(st.index))).WithMarks(marks), true
	case !st.isIdx:
		e, ok := value.Get(v, st.key)
		return e.WithMarks(marks), ok
	}
	return cty.NilVal, false
}

// interp is a string with `${...}` inside other text: every part is stringified.
type interp struct {
	parts []expr // literals and accesses
	where
}

func (in interp) accesses(f func(*access)) {
	for _, p := range in.parts {
		p.accesses(f)
	}
}

func (in interp) eval(ev *evaluator) (cty.Value, diag.Diagnostics) {
	var b strings.Builder
	var ds diag.Diagnostics
	var marks cty.ValueMarks = cty.NewValueMarks()
	known := true
	for _, p := range in.parts {
		v, d := p.eval(ev)
		ds = append(ds, d...)
		if err := chargePart(ev.m, v); err != nil { // before anything walks it: evalbudget.go
			return cty.DynamicVal, append(ds, over(err, in.where, "the interpolation"))
		}
		v, m := v.UnmarkDeep()
		maps.Copy(marks, m)
		if !v.IsWhollyKnown() {
			known = false
			continue
		}
		s, err := embed(v)
		if err != nil {
			ds = append(ds, diag.Errorf(in.rng, in.path, "cannot interpolate: %v", err))
			continue
		}
		b.WriteString(s)
	}
	if !known {
		return cty.UnknownVal(cty.String).WithMarks(marks), ds
	}
	return cty.StringVal(b.String()).WithMarks(marks), ds
}

// embed is the text of a value interpolated into a string: strings as they are, numbers
// and booleans as written, null as nothing, lists and objects as JSON.
func embed(v cty.Value) (string, error) {
	if v.IsNull() {
		return "", nil
	}
	switch v.Type() {
	case cty.String:
		return v.AsString(), nil
	case cty.Number:
		return value.FormatNumber(v.AsBigFloat()), nil
	case cty.Bool:
		return strconv.FormatBool(v.True()), nil
	}
	b, err := value.ToJSON(v)
	return string(b), err
}

// parseString turns a YAML string into an expression: a literal, one access alone (which
// keeps the referenced value's type) or an interpolation. `$${` is a literal `${`.
func parseString(s string, at where) (expr, diag.Diagnostics) {
	var parts []expr
	var text strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			text.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return nil, diag.Diagnostics{diag.Errorf(at.rng, at.path, "unterminated interpolation in %q: a ${ without its }", excerpt(s[i:]))}
			}
			body := s[i+2 : i+2+end]
			a, err := parseAccess(body)
			if err != "" {
				return nil, diag.Diagnostics{diag.Errorf(at.rng, at.path, "invalid property access ${%s}: %s", body, err)}
			}
			a.where = at
			if text.Len() > 0 {
				parts = append(parts, literal{cty.StringVal(text.String())})
				text.Reset()
			}
			parts = append(parts, a)
			i += 2 + end + 1
		default:
			text.WriteByte(s[i])
			i++
		}
	}
	if len(parts) == 0 {
		return literal{cty.StringVal(text.String())}, nil
	}
	if text.Len() > 0 {
		parts = append(parts, literal{cty.StringVal(text.String())})
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return interp{parts: parts, where: at}, nil
}

// parseAccess parses `root.a["b"][0]`; the root may be quoted (`["a.b"].c`). It returns a
// reason when the text is not a property access.
func parseAccess(text string) (*access, string) {
	a := &access{text: text}
	s := strings.TrimSpace(text)
	if s == "" {
		return nil, "empty"
	}
	name := func() string {
		j := strings.IndexAny(s, ".[")
		if j < 0 {
			j = len(s)
		}
		n := s[:j]
		s = s[j:]
		return n
	}
	var first = true
	for s != "" || first {
		switch {
		case strings.HasPrefix(s, "["):
			j := strings.IndexByte(s, ']')
			if j < 0 {
				return nil, "a [ without its ]"
			}
			in := s[1:j]
			s = s[j+1:]
			var st step
			if strings.HasPrefix(in, `"`) {
				k, err := strconv.Unquote(in)
				if err != nil {
					return nil, "bad quoted key " + in
				}
				st.key = k
			} else {
				n, err := strconv.Atoi(in)
				if err != nil || n < 0 {
					return nil, "an index must be a non-negative integer or a quoted key, not " + in
				}
				st.index, st.isIdx = n, true
			}
			if first {
				if st.isIdx {
					return nil, "it must start with a name"
				}
				a.root = st.key
			} else {
				a.steps = append(a.steps, st)
			}
		case first:
			a.root = name()
			if a.root == "" {
				return nil, "it must start with a name"
			}
		case strings.HasPrefix(s, "."):
			s = s[1:]
			n := name()
			if n == "" {
				return nil, "a . without a name after it"
			}
			a.steps = append(a.steps, step{key: n})
		default:
			return nil, "unexpected " + s
		}
		first = false
	}
	return a, ""
}

// rootExpr is an expression as the engine sees it: evaluated against the resources of a
// template.Scope, with the program's config values and variables.
type rootExpr struct {
	x    expr
	prog *program
	at   where // the whole expression, for what bounds it (evalbudget.go)
}

func (r rootExpr) Eval(s template.Scope) (cty.Value, diag.Diagnostics) {
	ev := newEvaluator(r.prog, s, nil)
	if err := ev.m.Budget().Err(); err != nil {
		return cty.DynamicVal, diag.Diagnostics{over(err, r.at, "the evaluation")}
	}
	v, ds := r.x.eval(ev)
	if ds.HasErrors() {
		return v, ds
	}
	if d := chargeResult(s, v, r.at); d != nil {
		return cty.DynamicVal, append(ds, d...)
	}
	return v, ds
}

// excerpt is the start of s, for a message: never a whole value of any size.
func excerpt(s string) string {
	const most = 60
	if len(s) <= most {
		return s
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
