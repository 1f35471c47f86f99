package pulumiyaml

import (
	"maps"
	"slices"
	"strings"

	"github.com/pulumi/pulumi-yaml/pkg/pulumiyaml/syntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// Package returns the plugin package of a type token: the first segment of
// `pkg:module:Type`, the third of `pulumi:providers:pkg`.
func Package(token string) string {
	parts := strings.Split(token, ":")
	if len(parts) == 3 && parts[0] == "pulumi" && parts[1] == "providers" {
		return parts[2]
	}
	return parts[0]
}

// canonicalType expands Pulumi YAML's shorthand `pkg:Type` to `pkg:index:Type`, the token the
// plugin and the URN use, where no schema resolves tokens (resolveTypes); other tokens are
// kept as written.
func canonicalType(token string) string {
	if parts := strings.Split(token, ":"); len(parts) == 2 && parts[0] != "" && parts[1] != "" {
		return parts[0] + ":index:" + parts[1]
	}
	return token
}

// isProviderType says whether token is an explicit provider resource's.
func isProviderType(token string) bool { return strings.HasPrefix(token, "pulumi:providers:") }

// resource reads one entry of resources:. Every resource is replaced create-first unless
// deleteBeforeReplace says otherwise (Pulumi's default), and is deleted with its stack
// unless retainOnDelete.
func (p *parser) resource(e entry) *template.Resource {
	body, ok := e.value.(*syntax.ObjectNode)
	if !ok {
		p.errorf(e.at, "resource %q must be an object with a type", e.key)
		return nil
	}
	r := &template.Resource{Name: p.prog.nameOf(e.key), Range: e.at.rng, DeletionPolicy: template.Delete, UpdateReplacePolicy: template.Delete,
		CreateBeforeDestroy: true, Options: template.Options{ProviderOrdersReplace: true}, PropertyRanges: map[string]diag.Range{}}
	props := expr(objectExpr{})
	var explicit []string
	for _, f := range entries(body, e.at.path) {
		switch f.key {
		case "type":
			s, ok := f.value.(*syntax.StringNode)
			if !ok || s.Value() == "" || strings.Contains(s.Value(), "${") {
				p.errorf(f.at, "type must be a type token such as random:RandomId")
				continue
			}
			r.Type, r.TypeRange = s.Value(), rangeOf(f.value)
		case "properties":
			if _, ok := f.value.(*syntax.ObjectNode); !ok {
				p.errorf(f.at, "properties must be an object")
				continue
			}
			x, ds := toExpr(f.value, f.at.path, r.PropertyRanges, "")
			p.ds = append(p.ds, ds...)
			r.PropertyRanges[""] = f.at.rng
			props = x
		case "options":
			explicit = p.options(r, f)
		case "get":
			p.errorf(f.at, "get (reading an existing resource) is not supported yet by cairn's Pulumi YAML front end")
		case "defaultProvider":
			if b, ok := p.boolean(f, where{rng: rangeOf(f.value), path: f.at.path}); ok && b {
				p.defaultProv[e.key] = true
			}
		case "name": // read before the resources (logicalName)
		default:
			p.errorf(f.at, "unknown resource property %q (expected type, properties, options, get, defaultProvider or name)", f.key)
		}
	}
	if r.Type == "" {
		p.errorf(e.at, "resource %q needs a type", e.key)
		return nil
	}
	r.Properties = rootExpr{props, p.prog, where{rng: r.PropertyRanges[""], path: "resources." + e.key + ".properties"}}
	deps := map[string]bool{}
	for _, d := range append(p.deps(props, e.at), explicit...) {
		if d == r.Name {
			p.errorf(e.at, "resource %q refers to itself", r.Name)
			continue
		}
		deps[d] = true
	}
	r.DependsOn = slices.Sorted(maps.Keys(deps))
	p.propertyDeps(r, props, e.at) // after the walk above, which reports what is wrong
	return r
}

// logicalName reads a resource's `name:`, the logical name Pulumi gives it instead of its key
// (in its URN, so in state and events); the program still refers to it by its key.
func (p *parser) logicalName(e entry) {
	body, ok := e.value.(*syntax.ObjectNode)
	if !ok {
		return
	}
	for _, f := range entries(body, e.at.path) {
		if f.key != "name" {
			continue
		}
		s, ok := f.value.(*syntax.StringNode)
		if !ok || s.Value() == "" || strings.Contains(s.Value(), "${") {
			p.errorf(where{rng: rangeOf(f.value), path: f.at.path}, "name must be a logical name (a string without interpolation)")
			return
		}
		if reserved(s.Value()) {
			p.errorf(where{rng: rangeOf(f.value), path: f.at.path}, "name %q is reserved: cairn names its own rows with %q and %q", s.Value(), template.DeposedMark, invokePrefix)
			return
		}
		if p.prog.names == nil {
			p.prog.names = map[string]string{}
		}
		p.prog.names[e.key] = s.Value()
	}
}

// refuseDuplicateNames refuses two resources of one logical name (a `name:` equal to another
// resource's): their URNs would be one.
func (p *parser) refuseDuplicateNames(rs []*template.Resource) {
	seen := map[string]bool{}
	for _, r := range rs {
		if seen[r.Name] {
			p.errorf(where{rng: r.Range, path: "resources." + r.Name}, "two resources have the logical name %q", r.Name)
		}
		seen[r.Name] = true
	}
}

// ignoreChanges reads property paths (`tags.env`, `ports[0]`, `["a.b"]`) as cty paths.
func (p *parser) ignoreChanges(r *template.Resource, f entry, at where) {
	l, ok := f.value.(*syntax.ListNode)
	if !ok {
		p.errorf(at, "ignoreChanges must be a list of property paths")
		return
	}
	for i := 0; i < l.Len(); i++ {
		s, ok := l.Index(i).(*syntax.StringNode)
		a, reason := (*access)(nil), "not a string"
		if ok {
			a, reason = parseAccess(s.Value())
		}
		if a == nil {
			p.errorf(where{rng: rangeOf(l.Index(i)), path: f.at.path}, "ignoreChanges: invalid property path: %s", reason)
			continue
		}
		path := cty.GetAttrPath(a.root)
		for _, st := range a.steps {
			if st.isIdx {
				path = path.IndexInt(st.index)
			} else {
				path = path.GetAttr(st.key)
			}
		}
		r.IgnoreChanges = append(r.IgnoreChanges, path)
		r.IgnoreChangesText = append(r.IgnoreChangesText, s.Value())
	}
}

// require records the plugin version a resource asks for; two versions of one package
// are refused, since one plugin serves a package.
func (p *parser) require(r *template.Resource, version string, at where) {
	p.versions = append(p.versions, pinned{r: r, version: version, at: at})
}

// pinned is a resource's version option, resolved to its package once its type is known.
type pinned struct {
	r       *template.Resource
	version string
	at      where
}

// requirements lists every package the resources use, with the version pinned, if any.
func (p *parser) requirements(rs []*template.Resource) []*template.ProviderRequirement {
	byPkg := map[string]*template.ProviderRequirement{}
	var out []*template.ProviderRequirement
	for _, r := range rs {
		pkg := Package(r.Type)
		if byPkg[pkg] == nil {
			byPkg[pkg] = &template.ProviderRequirement{Name: pkg, Source: Source(pkg), Range: r.TypeRange}
			out = append(out, byPkg[pkg])
		}
	}
	for _, v := range p.versions {
		req := byPkg[Package(v.r.Type)]
		if req == nil {
			continue
		}
		if req.Versions != "" && req.Versions != v.version {
			p.errorf(v.at, "package %s is asked for at version %s here and %s elsewhere: one plugin version serves a package", req.Name, v.version, req.Versions)
			continue
		}
		req.Versions = v.version
	}
	for _, req := range out {
		p.declared(req)
	}
	return out
}

// declared applies the package declaration of req's package, if any: its version unless a
// version option pinned one (the option wins, as in Pulumi).
func (p *parser) declared(req *template.ProviderRequirement) {
	d, ok := p.declaredVersion(req.Name)
	if !ok {
		return
	}
	if d.Extension != nil {
		p.ds = append(p.ds, diag.Errorf(d.rng(), "", "package %s extends plugin %s (extension:): not supported yet by cairn", req.Name, d.Name))
		return
	}
	if d.Parameterization != nil {
		// the base plugin at the declared version, parameterized (parameterized.go); a version
		// option names the parameterized package's version, which the declaration fixes
		req.Source, req.Versions = ParameterizedSource(d.parameterization()), d.Version
		return
	}
	if req.Versions == "" {
		req.Versions = d.Version
	}
}
