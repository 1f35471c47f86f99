package pulumiyaml

import (
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
)

// pulumiVar is the built-in variable `pulumi`: project, stack, organization, and the
// program's directories on the client's machine, cwd (where the program runs: the project
// directory or its `main:`) and rootDirectory (the project's, where Pulumi.yaml is).
func (p *program) pulumiVar(a *access) (cty.Value, []step, diag.Diagnostics) {
	attrs := map[string]cty.Value{
		"project":      cty.StringVal(p.project),
		"stack":        cty.StringVal(p.stack),
		"organization": cty.StringVal(localOrganization),
	}
	cwd, known := p.src.cwd()
	if known {
		attrs["cwd"] = cty.StringVal(cwd)
		attrs["rootDirectory"] = cty.StringVal(p.src.root)
	}
	if len(a.steps) > 0 && !a.steps[0].isIdx && !known && (a.steps[0].key == "cwd" || a.steps[0].key == "rootDirectory") {
		return cty.DynamicVal, nil, diag.Diagnostics{diag.Errorf(a.rng, a.path,
			"${%s}: the request does not say which directory the project was read from (deploy it with the cairn CLI from a directory)", a.text)}
	}
	return cty.ObjectVal(attrs), a.steps, nil
}
