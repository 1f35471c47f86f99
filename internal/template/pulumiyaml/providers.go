package pulumiyaml

import (
	"maps"
	"slices"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// sourcePrefix marks a requirement's Source as a Pulumi package: it cannot be a Terraform
// provider address (no host, namespace and type), so the plugin resolver can tell them apart.
const sourcePrefix = "pulumi:"

// Source is the requirement source of Pulumi package pkg.
func Source(pkg string) string { return sourcePrefix + pkg }

// PackageOf returns the package of a requirement source Source made: the plugin's package
// (the base plugin of a parameterized package, ParameterizedSource).
func PackageOf(source string) (string, bool) {
	pkg, ok := strings.CutPrefix(source, sourcePrefix)
	pkg, _, _ = strings.Cut(pkg, "?")
	return pkg, ok && pkg != ""
}

// Detect says whether files are a Pulumi project.
func Detect(files map[string]string) bool {
	_, ok := files[ProjectFile]
	return ok
}

// DefaultProviderAddr is the graph address of package pkg's default provider, the one that
// serves resources without a provider option; it is the default provider's URN name in
// Pulumi, and cannot collide with a resource name (those hold no ':').
func DefaultProviderAddr(pkg string) string { return ProviderAddr(pkg, "default") }

// ProviderAddr is the graph address of the provider configuration of provider resource name
// (type pulumi:providers:<pkg>): `pulumi:providers:<pkg>::<name>`, the tail of its URN. The
// resource itself is served by that configuration too (its Check is CheckConfig), and its
// row (an id, a fresh UUID; inputs, the checked configuration) is what resources served by
// it point at.
func ProviderAddr(pkg, name string) string { return "pulumi:providers:" + pkg + "::" + name }

// ProviderResource returns the name of the provider resource whose configuration addr is,
// "" for a default provider (which has no resource of the program) or another address.
func ProviderResource(addr string) string {
	rest, ok := strings.CutPrefix(addr, "pulumi:providers:")
	if !ok {
		return ""
	}
	_, name, ok := strings.Cut(rest, "::")
	if !ok || name == "default" || strings.HasPrefix(name, "default@") {
		return ""
	}
	return name
}

// assignProviders gives every resource the provider configuration that serves it, as Pulumi
// picks it: the `provider` option; else the one of its package in the `providers` option;
// else a provider resource of its package marked `defaultProvider: true`; else the
// package's default provider, configured from the stack config's `<pkg>:key` values (as
// strings, the way Pulumi passes them). A provider resource is served by its own
// configuration, the evaluated properties.
func (p *parser) assignProviders(st *template.Stack) {
	defaults := map[string]*template.Resource{}
	for _, r := range st.Resources {
		if !isProviderType(r.Type) {
			continue
		}
		pkg := Package(r.Type)
		r.Provider = ProviderAddr(pkg, r.Name)
		r.Properties = p.withDownloadURL(r, pkg) // downloadurl.go
		st.Providers = append(st.Providers, &template.ProviderConfig{Addr: r.Provider, Name: pkg, Config: r.Properties,
			DependsOn: slices.Clone(r.DependsOn), Range: r.Range, EnvVarMappings: p.envMappings[r.Name]})
		if p.defaultProv[r.Name] {
			if prev := defaults[pkg]; prev != nil {
				p.ds = append(p.ds, diag.Errorf(r.Range, "resources."+r.Name+".defaultProvider", "package %s already has a default provider: %s", pkg, prev.Name))
				continue
			}
			defaults[pkg] = r
		}
	}
	for name := range p.defaultProv {
		if r := st.Resource(name); r != nil && !isProviderType(r.Type) {
			p.ds = append(p.ds, diag.Errorf(r.Range, "resources."+name+".defaultProvider", "defaultProvider is only valid on a provider resource (type pulumi:providers:<package>)"))
		}
	}
	seen := map[string]bool{}
	for _, r := range st.Resources {
		if isProviderType(r.Type) {
			continue
		}
		pkg := Package(r.Type)
		if name := p.explicitProvider(st, r, pkg); name != "" {
			r.Provider = ProviderAddr(pkg, name)
			continue
		}
		if d := defaults[pkg]; d != nil {
			r.Provider = d.Provider
			if !slices.Contains(r.DependsOn, d.Name) {
				r.DependsOn = slices.Sorted(slices.Values(append(r.DependsOn, d.Name)))
			}
			continue
		}
		r.Provider = defaultProviderAddr(pkg, p.resourceDownloadURL(r, pkg)) // downloadurl.go
		if !seen[r.Provider] {
			seen[r.Provider] = true
			st.Providers = append(st.Providers, &template.ProviderConfig{Addr: r.Provider, Name: pkg,
				Config: literalConfig{p.stackProviderConfig(pkg)}, Range: r.TypeRange})
		}
	}
}

// explicitProvider is the provider resource a resource names for its package, "" for none.
func (p *parser) explicitProvider(st *template.Stack, r *template.Resource, pkg string) string {
	at := "resources." + r.Name + ".options.provider"
	if name := p.providerOpt[r.Name]; name != "" {
		prov := st.Resource(name)
		switch {
		case prov == nil || !isProviderType(prov.Type):
			p.ds = append(p.ds, diag.Errorf(r.Range, at, "${%s} is not a provider resource (type pulumi:providers:<package>)", name))
			return ""
		case Package(prov.Type) != pkg:
			p.ds = append(p.ds, diag.Errorf(r.Range, at, "${%s} is a provider of package %s; %s is of package %s", name, Package(prov.Type), r.Type, pkg))
			return ""
		}
		return name
	}
	for _, name := range p.providersOpt[r.Name] {
		if prov := st.Resource(name); prov != nil && isProviderType(prov.Type) && Package(prov.Type) == pkg {
			return name
		}
	}
	return ""
}

// stackProviderConfig is the configuration of package pkg's default provider: the stack
// config's `<pkg>:key` values, as strings (non-strings JSON-encoded), secrets kept secret.
func (p *parser) stackProviderConfig(pkg string) cty.Value {
	attrs := map[string]cty.Value{}
	for _, k := range slices.Sorted(maps.Keys(p.given)) {
		key, ok := strings.CutPrefix(k, pkg+":")
		if !ok || key == "" || strings.Contains(key, ":") {
			continue
		}
		sv := p.given[k]
		v, marks := sv.v.UnmarkDeep()
		if !v.IsKnown() || v.IsNull() {
			continue
		}
		s := ""
		if v.Type() == cty.String {
			s = v.AsString()
		} else if b, err := value.ToJSON(v); err == nil {
			s = string(b)
		} else {
			continue
		}
		out := cty.StringVal(s).WithMarks(marks)
		if sv.secret {
			out = value.Secret(out)
		}
		attrs[key] = out
	}
	return cty.ObjectVal(attrs)
}

// literalConfig is a provider configuration known at parse time.
type literalConfig struct{ v cty.Value }

func (c literalConfig) Eval(template.Scope) (cty.Value, diag.Diagnostics) { return c.v, nil }
