package tflang

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/template"
)

// refAddr is the address of a moved or removed block: module calls with their keys, then an
// optional resource with its key.
type refAddr struct {
	modules  string // "module.a[0].module.b", relative to the declaring module
	resource string // "t.n" or ""
	key      string // "[0]", `["k"]` or ""
	keyed    bool   // the last step (module or resource) has a key
	subject  hcl.Range
}

func (a refAddr) isModule() bool { return a.resource == "" }

func (a refAddr) String() string {
	s := a.modules
	if a.resource != "" {
		if s != "" {
			s += "."
		}
		s += a.resource + a.key
	}
	return s
}

// typ is the resource type of a resource address.
func (a refAddr) typ() string { t, _, _ := strings.Cut(a.resource, "."); return t }

// parseRefAddr reads the static address of a moved/removed argument, as terraform does.
func parseRefAddr(expr hcl.Expression) (refAddr, hcl.Diagnostics) {
	tr, ds := hcl.AbsTraversalForExpr(expr)
	bad := func(detail string) (refAddr, hcl.Diagnostics) {
		r := expr.Range()
		return refAddr{}, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid address", Detail: detail, Subject: &r}}
	}
	if ds.HasErrors() {
		return bad("An address of a resource, a resource instance, a module call or a module instance is required here.")
	}
	type step struct {
		name string
		key  string
	}
	var steps []step
	for _, t := range tr {
		switch t := t.(type) {
		case hcl.TraverseRoot:
			steps = append(steps, step{name: t.Name})
		case hcl.TraverseAttr:
			steps = append(steps, step{name: t.Name})
		case hcl.TraverseIndex:
			if len(steps) == 0 || steps[len(steps)-1].key != "" {
				return bad("An instance key must follow a resource or module name.")
			}
			switch {
			case t.Key.Type() == cty.String:
				steps[len(steps)-1].key = fmt.Sprintf("[%q]", t.Key.AsString())
			case t.Key.Type() == cty.Number:
				f, _ := t.Key.AsBigFloat().Int64()
				steps[len(steps)-1].key = fmt.Sprintf("[%d]", f)
			default:
				return bad("An instance key must be a number or a string.")
			}
		default:
			return bad("An address of a resource, a resource instance, a module call or a module instance is required here.")
		}
	}
	a := refAddr{subject: expr.Range()}
	var mods []string
	i := 0
	for i+1 < len(steps) && steps[i].name == "module" && steps[i].key == "" {
		mods = append(mods, "module."+steps[i+1].name+steps[i+1].key)
		a.keyed = steps[i+1].key != ""
		i += 2
	}
	a.modules = strings.Join(mods, ".")
	rest := steps[i:]
	switch {
	case len(rest) == 0 && len(mods) > 0:
		return a, nil
	case len(rest) == 2 && rest[0].key == "" && rest[0].name != "data" && rest[0].name != "module":
		a.resource, a.key, a.keyed = rest[0].name+"."+rest[1].name, rest[1].key, rest[1].key != ""
		return a, nil
	case len(rest) > 0 && rest[0].name == "data":
		return bad("Data sources cannot be moved or removed: they are read again at every run.")
	}
	return bad("An address of a resource, a resource instance, a module call or a module instance is required here.")
}

// addRefactors adds the module's moved and removed blocks to st with absolute addresses,
// checking them as terraform does.
func (m *module) addRefactors(st *template.Stack) hcl.Diagnostics {
	var ds hcl.Diagnostics
	for _, b := range m.refactors {
		if b.Type == "moved" {
			ds = append(ds, m.addMoved(st, b)...)
		} else {
			ds = append(ds, m.addRemoved(st, b)...)
		}
	}
	return ds
}

func (m *module) addMoved(st *template.Stack, b *hcl.Block) hcl.Diagnostics {
	content, ds := b.Body.Content(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "from", Required: true}, {Name: "to", Required: true}}})
	if ds.HasErrors() {
		return ds
	}
	from, d1 := parseRefAddr(content.Attributes["from"].Expr)
	to, d2 := parseRefAddr(content.Attributes["to"].Expr)
	if ds = append(d1, d2...); ds.HasErrors() {
		return ds
	}
	switch {
	case from.isModule() != to.isModule():
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid \"moved\" addresses",
			Detail: "The \"from\" and \"to\" addresses must either both refer to resources or both refer to modules.", Subject: &b.DefRange}}
	case !from.isModule() && from.typ() != to.typ():
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Resource type mismatch",
			Detail: fmt.Sprintf("This statement declares a move from %s to %s, which is a resource of a different type.", from, to), Subject: &b.DefRange}}
	case from.String() == to.String():
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Redundant move statement",
			Detail: fmt.Sprintf("This statement declares a move from %s to the same address, which is the same as not declaring this move at all.", from), Subject: &b.DefRange}}
	}
	if rng, ok := m.declared(from); ok {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Moved object still exists",
			Detail: fmt.Sprintf("This statement declares a move from %s, but that %s is still declared at %s.\n\nChange your configuration so that this %s will be declared as %s instead.",
				from, kindOf(from), rng, kindOf(from), to), Subject: &b.DefRange}}
	}
	st.Moves = append(st.Moves, &template.Move{From: m.prefix + from.String(), To: m.prefix + to.String(), Range: rangeOf(b.DefRange)})
	return nil
}

func kindOf(a refAddr) string {
	if a.isModule() {
		return "module call"
	}
	return "resource"
}

// declared reports whether the configuration still declares the object a (for an instance
// address, its resource), and where.
func (m *module) declared(a refAddr) (string, bool) {
	if a.modules != "" {
		first, _, _ := strings.Cut(strings.TrimPrefix(a.modules, "module."), ".")
		name, key, _ := strings.Cut(first, "[")
		call, ok := m.calls[name]
		if !ok || !a.isModule() || strings.Count(a.modules, "module.") > 1 {
			return "", false // a resource inside a called module: that module's own moved blocks speak for it
		}
		if key != "" && (call.count == nil && call.forEach == nil) {
			return "", false // an instance key of a call without count or for_each: not declared
		}
		if key == "" && (call.count != nil || call.forEach != nil) {
			return "", false
		}
		return call.block.DefRange.String(), true
	}
	rb, ok := m.resources[a.resource]
	if !ok {
		return "", false
	}
	multi := rb.count != nil || rb.forEach != nil
	if a.key != "" && !multi || a.key == "" && multi {
		return "", false // from a.b to a.b[0] (count added), or back: a move of the instance
	}
	return rb.block.DefRange.String(), true
}

func (m *module) addRemoved(st *template.Stack, b *hcl.Block) hcl.Diagnostics {
	content, ds := b.Body.Content(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "from", Required: true}},
		Blocks: []hcl.BlockHeaderSchema{{Type: "lifecycle"}, {Type: "provisioner", LabelNames: []string{"type"}}, {Type: "connection"}}})
	if ds.HasErrors() {
		return ds
	}
	from, ds := parseRefAddr(content.Attributes["from"].Expr)
	if ds.HasErrors() {
		return ds
	}
	if from.keyed {
		r := from.subject
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Resource instance keys not allowed",
			Detail: "Resource address must be a resource (e.g. \"test.example\") or a module (e.g. \"module.example\"), not a resource or module instance.", Subject: &r}}
	}
	if rng, ok := m.declared(from); ok {
		what := "resource"
		if from.isModule() {
			what = "module"
		}
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: fmt.Sprintf("Removed %s still exists", what),
			Detail: fmt.Sprintf("This statement declares that %s was removed, but it is still declared in configuration at %s.", from, rng), Subject: &b.DefRange}}
	}
	destroy := true
	for _, lb := range content.Blocks {
		if lb.Type != "lifecycle" {
			continue
		}
		attrs, d := lb.Body.JustAttributes()
		if ds = append(ds, d...); d.HasErrors() {
			continue
		}
		if a, ok := attrs["destroy"]; ok {
			v, d := m.static(a.Expr)
			ds = append(ds, d...)
			if !d.HasErrors() && v.Type() == cty.Bool && v.IsKnown() && !v.IsNull() {
				destroy = v.True()
			} else if !d.HasErrors() {
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid lifecycle destroy value",
					Detail: "destroy must be true or false.", Subject: a.Expr.Range().Ptr()})
			}
		}
	}
	if ds.HasErrors() {
		return ds
	}
	st.Removals = append(st.Removals, &template.Removal{From: m.prefix + from.String(), Destroy: destroy, Range: rangeOf(b.DefRange)})
	return nil
}
