package pulumiyaml

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/pulumi/pulumi-yaml/pkg/pulumiyaml/syntax"
	"github.com/zclconf/go-cty/cty"
	ctyconvert "github.com/zclconf/go-cty/cty/convert"

	"github.com/cairn-dev/cairn/internal/template"
)

// inheritable are the options a child takes from its parent unless it sets them itself, as
// Pulumi's SDKs do.
const (
	optProvider       = "provider"
	optProviders      = "providers"
	optProtect        = "protect"
	optRetainOnDelete = "retainOnDelete"
)

// options reads a resource's options and returns the resources it depends on through them
// (dependsOn, provider, parent, deletedWith, replaceWith).
func (p *parser) options(r *template.Resource, e entry) []string {
	st := p.st
	obj, ok := e.value.(*syntax.ObjectNode)
	if !ok {
		p.errorf(e.at, "options must be an object")
		return nil
	}
	var named []string
	set := p.setOptions(r)
	for _, f := range entries(obj, e.at.path) {
		at := where{rng: rangeOf(f.value), path: f.at.path}
		switch f.key {
		case "dependsOn":
			l, ok := f.value.(*syntax.ListNode)
			if !ok {
				p.errorf(at, "dependsOn must be a list of resources (${name})")
				continue
			}
			for i := 0; i < l.Len(); i++ {
				if name, ok := p.resourceRef(l.Index(i), where{rng: rangeOf(l.Index(i)), path: f.at.path}); ok {
					named = append(named, name)
				}
			}
		case "provider":
			if name, ok := p.resourceRef(f.value, at); ok {
				named = append(named, name)
				p.providerOpt[r.Name], set[optProvider] = name, true
			}
		case "providers":
			names := p.providersList(f, at)
			named = append(named, names...)
			p.providersOpt[r.Name], set[optProviders] = names, true
		case "parent":
			if name, ok := p.resourceRef(f.value, at); ok {
				named = append(named, name)
				r.Parent = name
			}
		case "protect":
			if b, ok := p.boolean(f, at); ok {
				r.PreventDestroy, set[optProtect] = b, true
			}
		case "deleteBeforeReplace":
			if b, ok := p.boolean(f, at); ok {
				r.CreateBeforeDestroy, r.ProviderOrdersReplace = !b, false
			}
		case "retainOnDelete":
			if b, ok := p.boolean(f, at); ok {
				retain(r, b)
				set[optRetainOnDelete] = true
			}
		case "ignoreChanges":
			p.ignoreChanges(r, f, at)
		case "replaceOnChanges":
			r.ReplaceOnChanges = p.paths(f, at)
		case "hideDiffs":
			r.HideDiffs = p.paths(f, at)
		case "additionalSecretOutputs":
			r.SecretOutputs = p.strings(f, at)
		case "customTimeouts":
			p.customTimeouts(r, f, at)
		case "deletedWith":
			if name, ok := p.resourceRef(f.value, at); ok {
				named = append(named, name) // made first, deleted last, as Pulumi's graph orders it
				r.DeletedWith = name
			}
		case "aliases":
			p.aliases(r, f, at, st)
		case "import":
			if v, ok := p.constant(f, at, cty.String); ok {
				if v.AsString() == "" {
					p.errorf(at, "import must be the id of the object to adopt")
					continue
				}
				r.ImportID = v.AsString()
				st.Imports = append(st.Imports, &template.Import{To: r.Name, ID: template.Const(v), Range: f.at.rng, IDRange: at.rng})
			}
		case "version":
			s, ok := f.value.(*syntax.StringNode)
			if !ok || s.Value() == "" {
				p.errorf(at, "version must be a version string such as 4.16.0")
				continue
			}
			p.require(r, s.Value(), at)
		case "pluginDownloadURL":
			if v, ok := p.constant(f, at, cty.String); ok {
				p.downloadURL[r.Name] = v.AsString() // kept as Pulumi keeps it, never used to download (downloadurl.go)
			}
		case "replaceWith":
			r.ReplaceWith = p.replaceWith(f, at)
			named = append(named, r.ReplaceWith...) // decided first: their replacement replaces this one
		case "envVarMappings":
			p.envVarMappings(r, f, at)
		case "replacementTrigger", "hooks":
			p.errorf(f.at, "the %s option is not supported by cairn's Pulumi YAML front end", f.key)
		default:
			p.errorf(f.at, "unknown resource option %q", f.key)
		}
	}
	return named
}

// retain sets what retainOnDelete says: the object outlives the resource's deletion and its
// replacement.
func retain(r *template.Resource, b bool) {
	r.DeletionPolicy, r.UpdateReplacePolicy = template.Delete, template.Delete
	if b {
		r.DeletionPolicy, r.UpdateReplacePolicy = template.Retain, template.Retain
	}
}

// setOptions is the set of inheritable options r sets itself.
func (p *parser) setOptions(r *template.Resource) map[string]bool {
	if p.set == nil {
		p.set = map[*template.Resource]map[string]bool{}
	}
	if p.set[r] == nil {
		p.set[r] = map[string]bool{}
	}
	return p.set[r]
}

// inherit gives each child what its parent has of provider, protect and retainOnDelete
// unless the child sets it; the provider only when it serves the child's package. Parents
// go first, so a grandchild inherits through its parent. Runs before default providers.
func (p *parser) inherit(st *template.Stack) {
	done := map[string]bool{}
	var visit func(r *template.Resource, depth int)
	visit = func(r *template.Resource, depth int) {
		if done[r.Name] || depth > len(st.Resources) { // a parent cycle is reported by checkCycles
			return
		}
		done[r.Name] = true
		parent := st.Resource(r.Parent)
		if parent == nil {
			return
		}
		visit(parent, depth+1)
		set := p.setOptions(r)
		// A child takes its parent's provider when it serves the child's package, and its
		// providers map; assignProviders then picks among them.
		if pp := p.providerOpt[parent.Name]; !set[optProvider] && pp != "" && !isProviderType(r.Type) {
			if pr := st.Resource(pp); pr != nil && Package(pr.Type) == Package(r.Type) {
				p.providerOpt[r.Name] = pp
				r.DependsOn = addDep(r.DependsOn, pp)
			}
		}
		if pps := p.providersOpt[parent.Name]; !set[optProviders] && len(pps) > 0 {
			p.providersOpt[r.Name] = append(p.providersOpt[r.Name], pps...)
			for _, pp := range pps {
				if pr := st.Resource(pp); pr != nil && Package(pr.Type) == Package(r.Type) {
					r.DependsOn = addDep(r.DependsOn, pp)
				}
			}
		}
		if !set[optProtect] {
			r.PreventDestroy = parent.PreventDestroy
		}
		if !set[optRetainOnDelete] {
			retain(r, parent.DeletionPolicy == template.Retain)
		}
	}
	for _, r := range st.Resources {
		visit(r, 0)
	}
}

// addDep adds name to the sorted list deps.
func addDep(deps []string, name string) []string {
	for i, d := range deps {
		switch {
		case d == name:
			return deps
		case d > name:
			return append(deps[:i:i], append([]string{name}, deps[i:]...)...)
		}
	}
	return append(deps, name)
}

// resourceRef reads `${name}` naming a resource.
func (p *parser) resourceRef(n syntax.Node, at where) (string, bool) {
	s, ok := n.(*syntax.StringNode)
	if ok {
		x, ds := parseString(s.Value(), at)
		if a, isAccess := x.(*access); !ds.HasErrors() && isAccess && len(a.steps) == 0 {
			if !p.prog.resources[a.root] {
				p.errorf(at, "${%s} is not a resource", a.root)
				return "", false
			}
			return p.prog.nameOf(a.root), true
		}
	}
	p.errorf(at, "expected a resource reference such as ${name}")
	return "", false
}

// constant evaluates an option's value, which may use config and variables but no resource
// (its value must be known before anything is deployed), converted to typ.
func (p *parser) constant(f entry, at where, typ cty.Type) (cty.Value, bool) {
	x, ds := toExpr(f.value, f.at.path, nil, "")
	p.ds = append(p.ds, ds...)
	if ds.HasErrors() {
		return cty.NilVal, false
	}
	if deps := p.deps(x, at); len(deps) > 0 {
		p.errorf(at, "the %s option cannot depend on resources (it uses %s): its value must be known before the deploy", f.key, strings.Join(deps, ", "))
		return cty.NilVal, false
	}
	v, ds := x.eval(newEvaluator(p.prog, noResources{}, p.prog.bud))
	p.ds = append(p.ds, ds...)
	if ds.HasErrors() {
		return cty.NilVal, false
	}
	v, _ = v.Unmark()
	cv, err := ctyconvert.Convert(v, typ)
	if err != nil || !cv.IsWhollyKnown() || cv.IsNull() {
		p.errorf(at, "%s must be a %s", f.key, typ.FriendlyName())
		return cty.NilVal, false
	}
	return cv, true
}

func (p *parser) boolean(f entry, at where) (bool, bool) {
	v, ok := p.constant(f, at, cty.Bool)
	if !ok {
		return false, false
	}
	return v.True(), true
}

// strings reads a list of strings.
func (p *parser) strings(f entry, at where) []string {
	l, ok := f.value.(*syntax.ListNode)
	if !ok {
		p.errorf(at, "%s must be a list of strings", f.key)
		return nil
	}
	var out []string
	for i := 0; i < l.Len(); i++ {
		s, ok := l.Index(i).(*syntax.StringNode)
		if !ok || s.Value() == "" {
			p.errorf(where{rng: rangeOf(l.Index(i)), path: f.at.path}, "%s must be a list of strings", f.key)
			continue
		}
		out = append(out, s.Value())
	}
	return out
}

// paths reads a list of property paths in Pulumi's syntax (`a.b`, `a[0]`, `a["k.x"]`, `*`).
func (p *parser) paths(f entry, at where) []string {
	out := p.strings(f, at)
	for _, s := range out {
		if s == "*" || strings.HasSuffix(s, ".*") || strings.HasSuffix(s, "[*]") {
			continue
		}
		if _, reason := parseAccess(s); reason != "" {
			p.errorf(at, "%s: invalid property path %q: %s", f.key, s, reason)
		}
	}
	return out
}

// customTimeouts reads `create`, `update`, `delete` and `read` durations ("5m", "1h", ".2m").
func (p *parser) customTimeouts(r *template.Resource, f entry, at where) {
	obj, ok := f.value.(*syntax.ObjectNode)
	if !ok {
		p.errorf(at, "customTimeouts must be an object with create, update, delete or read")
		return
	}
	for _, g := range entries(obj, f.at.path) {
		gat := where{rng: rangeOf(g.value), path: g.at.path}
		var dst *time.Duration
		switch g.key {
		case "create":
			dst = &r.Timeouts.Create
		case "update":
			dst = &r.Timeouts.Update
		case "delete":
			dst = &r.Timeouts.Delete
		case "read":
			dst = &r.Timeouts.Read
		default:
			p.errorf(g.at, "unknown custom timeout %q (expected create, update, delete or read)", g.key)
			continue
		}
		v, ok := p.constant(g, gat, cty.String)
		if !ok {
			continue
		}
		d, err := time.ParseDuration(v.AsString())
		if err != nil || d < 0 {
			p.errorf(gat, "customTimeouts.%s: %q is not a duration such as 5m, 1h30m or 90s", g.key, v.AsString())
			continue
		}
		*dst = d
	}
}

// aliases reads earlier identities of the resource: a URN string, or an object with name,
// type, parent, noParent, stack and project. cairn keys a stack's resources by logical name,
// so only an alias that names another resource in this stack moves state; one that changes
// the type or the parent alone keeps the resource where it is, as it does in Pulumi.
func (p *parser) aliases(r *template.Resource, f entry, at where, st *template.Stack) {
	l, ok := f.value.(*syntax.ListNode)
	if !ok {
		p.errorf(at, "aliases must be a list of URNs or objects with name, type, parent, noParent, stack or project")
		return
	}
	for i := 0; i < l.Len(); i++ {
		n := l.Index(i)
		nat := where{rng: rangeOf(n), path: fmt.Sprintf("%s[%d]", f.at.path, i)}
		name, ok := p.alias(n, nat)
		if !ok || name == "" || name == r.Name {
			continue
		}
		r.Aliases = append(r.Aliases, name)
		st.Moves = append(st.Moves, &template.Move{From: name, To: r.Name, Range: nat.rng})
	}
}

// alias returns the logical name an alias names in this stack ("" when it names another
// stack or project, or keeps the name).
func (p *parser) alias(n syntax.Node, at where) (string, bool) {
	switch n := n.(type) {
	case *syntax.StringNode:
		urn := n.Value()
		parts := strings.Split(urn, "::")
		if !strings.HasPrefix(urn, "urn:pulumi:") || len(parts) < 4 {
			p.errorf(at, "alias %q is not a URN (urn:pulumi:<stack>::<project>::<type>::<name>)", urn)
			return "", false
		}
		if strings.TrimPrefix(parts[0], "urn:pulumi:") != p.prog.stack || parts[1] != p.prog.project {
			return "", true
		}
		return strings.Join(parts[3:], "::"), true
	case *syntax.ObjectNode:
		name := ""
		for _, g := range entries(n, at.path) {
			gat := where{rng: rangeOf(g.value), path: g.at.path}
			switch g.key {
			case "name":
				if v, ok := p.constant(g, gat, cty.String); ok {
					name = v.AsString()
				}
			case "stack", "project":
				v, ok := p.constant(g, gat, cty.String)
				if ok && v.AsString() != map[string]string{"stack": p.prog.stack, "project": p.prog.project}[g.key] {
					return "", true
				}
			case "parent":
				p.resourceRef(g.value, gat)
			case "noParent":
				p.boolean(g, gat)
			case "type":
				p.constant(g, gat, cty.String)
			default:
				p.errorf(g.at, "unknown alias field %q (expected name, type, parent, noParent, stack or project)", g.key)
			}
		}
		return name, true
	}
	p.errorf(at, "an alias must be a URN or an object with name, type, parent, noParent, stack or project")
	return "", false
}

// noResources is the scope of an option's value: no resource is known yet.
type noResources struct{}

func (noResources) Context() context.Context { return context.Background() }

func (noResources) Resource(string) (template.ResourceValue, bool) {
	return template.ResourceValue{}, false
}

// providersList reads the providers option: a list of provider resources, or a map of
// package → provider resource (the keys say nothing more: the provider's type names its
// package).
func (p *parser) providersList(f entry, at where) []string {
	var nodes []syntax.Node
	switch v := f.value.(type) {
	case *syntax.ListNode:
		for i := 0; i < v.Len(); i++ {
			nodes = append(nodes, v.Index(i))
		}
	case *syntax.ObjectNode:
		for _, e := range entries(v, f.at.path) {
			nodes = append(nodes, e.value)
		}
	default:
		p.errorf(at, "providers must be a list of provider resources (${name}) or a map of package to provider resource")
		return nil
	}
	var names []string
	for _, n := range nodes {
		if name, ok := p.resourceRef(n, where{rng: rangeOf(n), path: f.at.path}); ok {
			names = append(names, name)
		}
	}
	return names
}
