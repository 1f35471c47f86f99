package pulumiyaml

import (
	"github.com/blang/semver"
	"github.com/pulumi/pulumi-yaml/pkg/pulumiyaml/syntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// PulumiVersion is the version of the Pulumi CLI whose language cairn speaks: a program's
// `pulumi: requiredVersion:` range is checked against it, as `pulumi up` checks its own.
const PulumiVersion = "3.260.0"

// requiredVersion checks the program's `pulumi:` settings: requiredVersion, a semver range
// (">=3.0.0", "=3.1.2", ">=3.1.0 <4.0.0") that may use config values.
func (p *parser) requiredVersion(e entry) {
	body, ok := e.value.(*syntax.ObjectNode)
	if !ok {
		p.errorf(e.at, "pulumi must be an object")
		return
	}
	for _, f := range entries(body, e.at.path) {
		if f.key != "requiredVersion" {
			p.errorf(f.at, "unknown pulumi setting %q (expected requiredVersion)", f.key)
			continue
		}
		x, ds := toExpr(f.value, f.at.path, nil, "")
		p.ds = append(p.ds, ds...)
		if ds.HasErrors() {
			continue
		}
		configOnly := true
		x.accesses(func(a *access) {
			if _, ok := p.prog.config[a.root]; !ok {
				configOnly = false
				p.errorf(a.where, "${%s}: requiredVersion may use config values only", a.text)
			}
		})
		if !configOnly {
			continue
		}
		v, ds := x.eval(newEvaluator(p.prog, nil, p.prog.bud))
		p.ds = append(p.ds, ds...)
		v, _ = v.Unmark()
		if ds.HasErrors() || !v.IsKnown() {
			continue
		}
		if v.IsNull() || v.Type() != cty.String {
			p.errorf(f.at, "requiredVersion must be a version range string")
			continue
		}
		r, err := semver.ParseRange(v.AsString())
		if err != nil {
			p.errorf(f.at, "requiredVersion %q is not a version range: %v", v.AsString(), err)
			continue
		}
		if !r(semver.MustParse(PulumiVersion)) {
			p.errorf(f.at, "Pulumi CLI version %s does not satisfy the version range %q (cairn speaks the language of Pulumi %s)", PulumiVersion, v.AsString(), PulumiVersion)
		}
	}
}

// builtinTypes are the resources the Pulumi engine serves itself (package pulumi), by the
// token Pulumi YAML's shorthand expands to; cairn serves them with
// internal/provider/pulumibuiltin.
var builtinTypes = map[string]bool{"pulumi:index:Stash": true}

// refuseBuiltinResources refuses the engine's own resources cairn does not serve
// (StackReference): without this they would be looked for as a plugin named pulumi.
func (p *parser) refuseBuiltinResources(rs []*template.Resource) {
	for _, r := range rs {
		if Package(r.Type) == "pulumi" && !isProviderType(r.Type) && !builtinTypes[canonicalType(r.Type)] {
			p.ds = append(p.ds, diag.Errorf(r.TypeRange, "resources."+r.Name+".type",
				"%s is a resource the Pulumi engine serves itself: not supported yet by cairn (pulumi:Stash is)", r.Type))
		}
	}
}
