package pulumiyaml

import (
	"github.com/pulumi/pulumi-yaml/pkg/pulumiyaml/syntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/template"
)

// replaceWith reads the replaceWith option: a list of resources (${name}) whose replacement
// replaces this resource too, as pulumi v3.260.0's step generator does.
func (p *parser) replaceWith(f entry, at where) []string {
	l, ok := f.value.(*syntax.ListNode)
	if !ok {
		p.errorf(at, "replaceWith must be a list of resources (${name})")
		return nil
	}
	var names []string
	for i := 0; i < l.Len(); i++ {
		if name, ok := p.resourceRef(l.Index(i), where{rng: rangeOf(l.Index(i)), path: f.at.path}); ok {
			names = addDep(names, name)
		}
	}
	return names
}

// envVarMappings reads the envVarMappings option of a provider resource: an object of
// environment variable names, KEY: NAME, so the provider's process sees cairn's KEY under
// NAME (Pulumi's direction). Values may use config, not resources.
func (p *parser) envVarMappings(r *template.Resource, f entry, at where) {
	if !isProviderType(r.Type) {
		p.errorf(at, "envVarMappings can only be used with provider resources (type pulumi:providers:<package>)")
		return
	}
	v, ok := p.constant(f, at, cty.Map(cty.String))
	if !ok {
		return
	}
	m := map[string]string{}
	for k, s := range v.AsValueMap() {
		if k == "" || s.AsString() == "" {
			p.errorf(at, "envVarMappings: variable names must not be empty")
			return
		}
		m[k] = s.AsString()
	}
	if p.envMappings == nil {
		p.envMappings = map[string]map[string]string{}
	}
	p.envMappings[r.Name] = m
}
