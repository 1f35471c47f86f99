package pulumiyaml

import (
	"context"
	"path"
	"path/filepath"

	"github.com/pulumi/pulumi-yaml/pkg/pulumiyaml/syntax"

	"github.com/cairn-dev/cairn/internal/template"
)

// projectPlugin is an entry of Pulumi.yaml's `plugins: providers:`: the directory holding
// pulumi-resource-<name>, relative to the project or absolute, and the version it serves.
type projectPlugin struct {
	name, dir, version string
	at                 where
}

// projectPlugins reads Pulumi.yaml's plugins: as Pulumi does: `providers:` entries with name,
// path and an optional version. Language and analyzer plugins mean nothing to cairn.
func (p *parser) projectPlugins(e entry) {
	obj, ok := e.value.(*syntax.ObjectNode)
	if !ok {
		p.errorf(e.at, "plugins must be an object with providers, languages or analyzers")
		return
	}
	for _, kind := range entries(obj, e.at.path) {
		switch kind.key {
		case "providers":
		case "languages", "analyzers":
			p.warnf(kind.at, "plugins.%s is ignored: cairn runs only resource provider plugins", kind.key)
			continue
		default:
			p.errorf(kind.at, "unknown plugins kind %q (expected providers, languages or analyzers)", kind.key)
			continue
		}
		l, ok := kind.value.(*syntax.ListNode)
		if !ok {
			p.errorf(kind.at, "plugins.providers must be a list of {name, path, version}")
			continue
		}
		for i := 0; i < l.Len(); i++ {
			p.projectPlugin(l.Index(i), where{rng: rangeOf(l.Index(i)), path: kind.at.path})
		}
	}
}

func (p *parser) projectPlugin(n syntax.Node, at where) {
	obj, ok := n.(*syntax.ObjectNode)
	if !ok {
		p.errorf(at, "a plugin must be an object with name, path and an optional version")
		return
	}
	pp := projectPlugin{at: at}
	for _, f := range entries(obj, at.path) {
		s, ok := f.value.(*syntax.StringNode)
		if !ok {
			p.errorf(f.at, "plugin %s must be a string", f.key)
			continue
		}
		switch f.key {
		case "name":
			pp.name = s.Value()
		case "path":
			pp.dir = s.Value()
		case "version":
			pp.version = s.Value()
		default:
			p.errorf(f.at, "unknown plugin key %q (expected name, path, version)", f.key)
		}
	}
	if pp.name == "" || pp.dir == "" {
		p.errorf(at, "a plugin needs a name and a path")
		return
	}
	p.plugins = append(p.plugins, pp)
}

// localPlugins gives each requirement the project's plugins of its package, their paths
// made absolute against the project directory. They are binaries on the client's machine: a
// cairn that is not the CLI's own in-process server, or a tenant that may not run code on it,
// does not use them (allowed is false) and says so.
func (p *parser) localPlugins(reqs []*template.ProviderRequirement, allowed bool) {
	if len(p.plugins) == 0 {
		return
	}
	root := p.prog.src.root
	if !allowed || root == "" {
		p.warnf(p.plugins[0].at,
			"plugins: is ignored: this cairn server does not run plugin binaries from the project's directory (only the CLI's in-process one does); it finds plugins in its --plugin-dir and $PULUMI_HOME/plugins")
		return
	}
	byPkg := map[string]*template.ProviderRequirement{}
	for _, r := range reqs {
		byPkg[r.Name] = r
	}
	for _, pp := range p.plugins {
		r := byPkg[pp.name]
		if r == nil {
			continue // a plugin no resource uses
		}
		dir := filepath.FromSlash(pp.dir)
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(filepath.FromSlash(root), filepath.FromSlash(path.Clean(pp.dir)))
		}
		r.Local = append(r.Local, template.LocalPlugin{Dir: dir, Version: pp.version})
	}
}

// withLocalPlugins is ctx carrying the requirements' project plugins, so that reading a
// package's schema (Options.Schema) finds the same plugin the deploy will run.
func withLocalPlugins(ctx context.Context, reqs []*template.ProviderRequirement) context.Context {
	m := map[string][]template.LocalPlugin{}
	for _, r := range reqs {
		if len(r.Local) > 0 {
			m[r.Source] = r.Local
		}
	}
	return template.WithLocalPlugins(ctx, m)
}
