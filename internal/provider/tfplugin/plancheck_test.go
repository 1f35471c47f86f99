package tfplugin

import (
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

func problems(ps []problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, pathString(p.path)+": "+p.msg)
	}
	slices.Sort(out)
	return out
}

func with(v cty.Value, kv ...any) cty.Value {
	m := v.AsValueMap()
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(cty.Value)
	}
	return cty.ObjectVal(m)
}

func TestCheckPlan(t *testing.T) {
	b := testBlock()
	config := with(b.emptyValue(), "name", s("n"), "size", cty.NumberIntVal(1),
		"list", cty.ListVal([]cty.Value{obj(map[string]cty.Value{"k": s("a"), "v": cty.NullVal(cty.String)})}))
	prior := with(config, "id", s("i"), "size", cty.NumberIntVal(2))
	ok := with(config, "id", cty.UnknownVal(cty.String), "zone", s("z"),
		"list", cty.ListVal([]cty.Value{obj(map[string]cty.Value{"k": s("a"), "v": cty.UnknownVal(cty.String)})}))
	if ps := b.checkPlan(prior, config, ok, nil); len(ps) > 0 {
		t.Errorf("valid plan: %v", problems(ps))
	}
	// keeping the prior value instead of an equivalent configured one is allowed
	if ps := b.checkPlan(prior, config, with(ok, "size", cty.NumberIntVal(2)), nil); len(ps) > 0 {
		t.Errorf("prior kept: %v", problems(ps))
	}
	bad := with(ok, "name", s("other"), "size", cty.NumberIntVal(9),
		"list", cty.ListVal([]cty.Value{obj(map[string]cty.Value{"k": s("b"), "v": s("v")})}))
	got := problems(b.checkPlan(prior, config, bad, nil))
	want := []string{
		`list.0.k: planned value "b" does not match config value "a" nor prior value "a"`,
		`name: planned value "other" does not match config value "n" nor prior value "n"`,
		`size: planned value 9 does not match config value 1 nor prior value 2`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("invalid plan problems:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ps := b.checkPlan(prior, config, cty.NullVal(b.ty), nil); len(ps) != 1 || !strings.Contains(ps[0].msg, "absence") {
		t.Errorf("null plan: %v", problems(ps))
	}
	// fewer blocks than configured
	short := with(ok, "list", cty.ListValEmpty(b.blocks["list"].block.ty))
	if ps := b.checkPlan(prior, config, short, nil); len(ps) != 1 || !strings.Contains(ps[0].msg, "block count") {
		t.Errorf("short list: %v", problems(ps))
	}
}

func TestCheckApplied(t *testing.T) {
	b := sensBlock()
	planned := with(sensValue(s("x")), "plain", cty.UnknownVal(cty.String))
	if ps := b.checkApplied(planned, sensValue(s("x")), nil); len(ps) > 0 {
		t.Errorf("unknown filled in: %v", problems(ps))
	}
	got := problems(b.checkApplied(planned, with(sensValue(s("y")), "logins", cty.ListValEmpty(b.attrs["logins"].nested.objectType())), nil))
	want := []string{"logins: inconsistent values for sensitive attribute", "secret: inconsistent values for sensitive attribute"}
	if !slices.Equal(got, want) {
		t.Errorf("problems = %v, want %v", got, want)
	}
	tb := testBlock()
	p := with(tb.emptyValue(), "name", s("n"), "size", cty.NumberIntVal(1))
	got = problems(tb.checkApplied(p, with(p, "size", cty.NumberIntVal(2)), nil))
	if !slices.Equal(got, []string{"size: was 1, but now 2"}) {
		t.Errorf("problems = %v", got)
	}
	if ps := tb.checkApplied(p, cty.NullVal(tb.ty), nil); len(ps) != 1 || (problem{nil, ps[0].msg}).text() != "Root object was present, but now absent" {
		t.Errorf("null result: %v", problems(ps))
	}
}

func TestConform(t *testing.T) {
	b := testBlock()
	v := obj(map[string]cty.Value{
		"id":   s("set by user"),
		"size": s("big"),
		"what": cty.True,
		"list": cty.TupleVal([]cty.Value{obj(map[string]cty.Value{}), obj(map[string]cty.Value{"k": cty.UnknownVal(cty.String)})}),
	})
	got := problems(b.conform(v, nil))
	want := []string{
		"id: Invalid Configuration for Read-Only Attribute: Cannot set value for this attribute as the provider has marked it as read-only. Remove the configuration line setting the value.",
		`list.0.k: Missing required argument: The argument "k" is required, but no definition was found.`,
		`name: Missing required argument: The argument "name" is required, but no definition was found.`,
		"size: Incorrect attribute value type: a number is required",
		`what: Unsupported argument: An argument named "what" is not expected here.`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("conform:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ps := b.conform(cty.UnknownVal(b.ty), nil); len(ps) > 0 {
		t.Errorf("unknown config: %v", problems(ps))
	}
	b.blocks["list"].min, b.blocks["list"].max = 1, 1
	got = problems(b.conform(with(b.emptyValue(), "name", s("n")), nil))
	if len(got) != 1 || !strings.Contains(got[0], "Insufficient list blocks") {
		t.Errorf("min items: %v", got)
	}
}
