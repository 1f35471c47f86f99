package pulumiyaml

import (
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// program is what expressions resolve names against: config, variables and resources share
// one namespace, and `pulumi` is built in.
type program struct {
	project, stack string
	bud            *budget.Budget // the parse's: bounds what the parse itself evaluates (options)
	config         map[string]cty.Value
	variables      map[string]expr
	resources      map[string]bool
	src            *sources          // the project's files and directories
	types          map[string]string // resource → its type token, once resolved (resinfo.go)
	// names are the resources whose `name:` gives them another logical name (URN, state,
	// events) than the key the program refers to them by: key → name.
	names map[string]string
}

// nameOf is the logical name of the resource the program calls key.
func (prog *program) nameOf(key string) string {
	if n, ok := prog.names[key]; ok {
		return n
	}
	return key
}

// evaluator evaluates the expressions of one Eval: variables are computed once each.
type evaluator struct {
	prog  *program
	scope template.Scope
	vars  map[string]cty.Value
	m     *budget.Meter // what the evaluation builds (evalbudget.go)
}

// root resolves the root of an access and returns its value and the steps still to take.
// A resource's `id` is its physical id; its other properties are its outputs.
func (ev *evaluator) root(a *access) (cty.Value, []step, diag.Diagnostics) {
	p := ev.prog
	if v, ok := p.config[a.root]; ok {
		return v, a.steps, nil
	}
	if x, ok := p.variables[a.root]; ok {
		if v, ok := ev.vars[a.root]; ok {
			return v, a.steps, nil
		}
		v, ds := x.eval(ev)
		ev.vars[a.root] = v
		return v, a.steps, ds
	}
	if p.resources[a.root] {
		rv, ok := ev.scope.Resource(p.nameOf(a.root))
		if !ok {
			rv = template.UnknownResource
		}
		if len(a.steps) > 0 && !a.steps[0].isIdx && a.steps[0].key == "id" {
			return rv.ID, a.steps[1:], nil
		}
		return rv.Outputs, a.steps, nil
	}
	if a.root == "pulumi" {
		return p.pulumiVar(a)
	}
	return cty.DynamicVal, nil, diag.Diagnostics{diag.Errorf(a.rng, a.path, "${%s}: %q is not a config value, variable or resource", a.text, a.root)}
}

// localOrganization is the organization Pulumi reports for stacks without a cloud backend.
const localOrganization = "organization"
