package app

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strings"

	"github.com/cairn-dev/cairn/internal/addr"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/tfinstall"
	"github.com/cairn-dev/cairn/internal/provider/tfplugin"
	"github.com/cairn-dev/cairn/internal/template"
)

// Cleanup kills every provider plugin process cairn started; main calls it on the way out, so
// that no plugin outlives cairn (plugins are also killed by the kernel if cairn is killed).
func Cleanup() { tfplugin.CleanupClients() }

// plugins serves the engine's Terraform providers from the places terraform users keep them:
// cairn's --plugin-dir first, then what terraform's CLI configuration names.
type plugins struct {
	inst    *tfinstall.Installer
	dirs    []string // --plugin-dir: Pulumi plugins are looked for there too
	log     *slog.Logger
	private privateProviders
	kube    func(tenant, dir string) (provider.Provider, error) // kube.go
}

var _ engine.Plugins = (*plugins)(nil)

func newPlugins(dirs []string, log *slog.Logger) (*plugins, error) {
	inst, err := tfinstall.Discover(dirs)
	if err != nil {
		return nil, fmt.Errorf("cannot read the Terraform CLI configuration: %w", err)
	}
	return &plugins{inst: inst, dirs: dirs, log: log}, nil
}

func (p *plugins) Resolve(ctx context.Context, reqs []*template.ProviderRequirement, lockSrc []byte, upgrade bool) (map[string]engine.Plugin, []byte, diag.Diagnostics) {
	var diags diag.Diagnostics
	lock := &tfinstall.Lock{Providers: map[addr.Provider]tfinstall.LockedProvider{}}
	if lockSrc != nil {
		l, ds := tfinstall.ParseLock(engine.LockFileName, lockSrc)
		diags = diags.Append(ds)
		if ds.HasErrors() {
			return nil, nil, diags
		}
		lock = l
	}
	private, reqs, pdiags := p.private.resolve(ctx, reqs, p.log)
	if diags = diags.Append(pdiags); diags.HasErrors() {
		return nil, nil, diags
	}
	reqs = p.resolveKube(ctx, reqs, private)                   // kube.go
	pulumi, reqs, pdiags := resolvePulumi(reqs, p.dirs, p.log) // pulumiplugins.go
	if diags = diags.Append(pdiags); diags.HasErrors() {
		return nil, nil, diags
	}
	maps.Copy(private, pulumi) // Pulumi has no lock file: pinned versions are in the program
	var treqs []tfinstall.Requirement
	ranges := map[addr.Provider]diag.Range{}
	for _, r := range reqs {
		src, err := addr.ParseProvider(r.Source)
		if err != nil {
			return nil, nil, diags.Append(diag.Errorf(r.Range, "terraform.required_providers."+r.Name, "%s", err))
		}
		treqs = append(treqs, tfinstall.Requirement{Source: src, Constraints: r.Versions})
		ranges[src] = r.Range
	}
	pkgs, newLock, err := p.inst.Resolve(treqs, lock, upgrade)
	if err != nil {
		rng := diag.Range{}
		for src, r := range ranges {
			if strings.Contains(err.Error(), src.String()) {
				rng = r
			}
		}
		return nil, nil, diags.Append(diag.Errorf(rng, "", "Failed to query available provider packages: %s", err))
	}
	out := private // private providers pin exact versions in the template: they stay out of the lock
	for src, pkg := range pkgs {
		out[src.String()] = plugin{pkg: pkg, log: p.log}
	}
	if len(pkgs) == 0 && lockSrc == nil {
		return out, nil, diags // nothing to lock: no lock file, as terraform writes none
	}
	return out, newLock.Bytes(), diags
}

// plugin is one resolved provider package.
type plugin struct {
	pkg tfinstall.Package
	log *slog.Logger
}

func (p plugin) Version() string { return p.pkg.Version }

func (p plugin) Open(name, dir string) provider.Provider {
	cache, _ := tfinstall.CacheDir() // none: the schemas are read from the plugin every time
	return tfplugin.New(tfplugin.Config{Name: name, Executable: p.pkg.Executable, Logger: p.log, Dir: dir,
		SchemaCacheDir: cache, PackageHash: p.pkg.Hash})
}
