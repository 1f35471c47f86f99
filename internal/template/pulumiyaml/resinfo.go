package pulumiyaml

import (
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// fn::pulumiResourceName and fn::pulumiResourceType take a resource (`${res}`) and give its
// logical name and its type token, the canonical one the schema declares
// (`simple:index:Resource` for a resource written `simple:Resource`), as Pulumi's URN says.

// resourceInfoKind is "name" or "type" for those two built-ins, "" for any other key.
func resourceInfoKind(key string) string {
	switch strings.ToLower(key) {
	case "fn::pulumiresourcename":
		return "name"
	case "fn::pulumiresourcetype":
		return "type"
	}
	return ""
}

type resourceInfo struct {
	kind string
	res  *access
	where
}

func (ri resourceInfo) accesses(f func(*access)) { f(ri.res) }

func (ri resourceInfo) eval(ev *evaluator) (cty.Value, diag.Diagnostics) {
	if !ev.prog.resources[ri.res.root] {
		return cty.DynamicVal, diag.Diagnostics{diag.Errorf(ri.rng, ri.path, "fn::pulumiResource%s needs a resource (${name}); %q is not one", strings.ToUpper(ri.kind[:1])+ri.kind[1:], ri.res.root)}
	}
	name := ev.prog.nameOf(ri.res.root)
	if ri.kind == "name" {
		return cty.StringVal(name), nil
	}
	return cty.StringVal(ev.prog.types[name]), nil
}

// toResourceInfo reads one of the two calls: its argument must be `${name}`.
func toResourceInfo(e entry, kind string) (expr, diag.Diagnostics) {
	at := where{rng: e.at.rng, path: e.at.path}
	x, ds := toExpr(e.value, e.at.path, nil, "")
	a, ok := x.(*access)
	if ds.HasErrors() || !ok || len(a.steps) > 0 {
		return literal{cty.DynamicVal}, append(ds, diag.Errorf(at.rng, at.path, "%s needs a resource reference such as ${name}", e.key))
	}
	return resourceInfo{kind: kind, res: a, where: at}, ds
}

// recordTypes keeps every resource's type token, once resolved, for fn::pulumiResourceType.
func (prog *program) recordTypes(rs []*template.Resource) {
	prog.types = map[string]string{}
	for _, r := range rs {
		prog.types[r.Name] = r.Type
	}
}
