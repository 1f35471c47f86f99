package app

import (
	"context"
	"log/slog"
	"os"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/pulumibuiltin"
	"github.com/cairn-dev/cairn/internal/provider/pulumifind"
	"github.com/cairn-dev/cairn/internal/provider/pulumirpc"
	"github.com/cairn-dev/cairn/internal/provider/tfinstall"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/template/pulumiyaml"
)

// resolvePulumi finds the plugin of every Pulumi package among reqs (pulumiyaml.Source) in
// the project's plugins: (ProviderRequirement.Local), then cairn's plugin directories, then
// $PULUMI_HOME/plugins, and returns them by source with the requirements that are not Pulumi's.
func resolvePulumi(reqs []*template.ProviderRequirement, dirs []string, log *slog.Logger) (map[string]engine.Plugin, []*template.ProviderRequirement, diag.Diagnostics) {
	out := map[string]engine.Plugin{}
	var rest []*template.ProviderRequirement
	var diags diag.Diagnostics
	for _, r := range reqs {
		pkg, ok := pulumiyaml.PackageOf(r.Source)
		if !ok {
			rest = append(rest, r)
			continue
		}
		if pkg == pulumibuiltin.Package { // the engine's own resources (pulumi:index:Stash)
			out[r.Source] = builtinPlugin{}
			continue
		}
		finder := pulumifind.Finder{PluginDirs: dirs}
		for _, l := range r.Local { // the project's plugins: (the engine allowed them)
			finder.Project = append(finder.Project, pulumifind.ProjectPlugin{Name: pkg, Path: l.Dir, Version: l.Version})
		}
		found, err := finder.Find(pkg, r.Versions)
		if err != nil {
			diags = diags.Append(diag.Errorf(r.Range, "", "%s", err))
			continue
		}
		pp := pulumiPlugin{pkg: pkg, asked: r.Versions, found: found, log: log}
		if pz, ok := pulumiyaml.ParameterizationOf(r.Source); ok {
			pp.param = &pulumirpc.Parameterization{Name: pz.Name, Version: pz.Version, Value: pz.Value, Plugin: pz.Plugin}
		}
		out[r.Source] = pp
	}
	return out, rest, diags
}

// pulumiPlugin is one found Pulumi plugin; each Open is its own process, started on first use.
type pulumiPlugin struct {
	pkg   string
	asked string // the version the program pinned, "" for any
	found pulumifind.Plugin
	log   *slog.Logger
	// param makes the plugin another package's provider (a parameterized package)
	param *pulumirpc.Parameterization
}

func (p pulumiPlugin) Version() string { return p.found.Version }

// PackageSchema reads the plugin's package schema, from the disk cache when it was read
// before (engine.SchemaPlugin).
func (p pulumiPlugin) PackageSchema(ctx context.Context) ([]byte, error) {
	cache, _ := tfinstall.CacheDir() // none: read from the plugin every time
	opts := p.options("")
	opts.SchemaCacheDir = cache
	return pulumirpc.Schema(ctx, opts)
}

// options launch the plugin; a parameterized one serves its parameterization's package, at
// that package's version.
func (p pulumiPlugin) options(dir string) pulumirpc.Options {
	opts := pulumirpc.Options{Package: p.pkg, Executable: p.found.Executable, Dir: dir, Version: p.version(), Log: p.log,
		GRPCLog: os.Getenv(pulumirpc.GRPCLogVar)}
	if p.param != nil {
		opts.Package, opts.Version, opts.Parameterization = p.param.Name, p.param.Version, p.param
	}
	return opts
}

func (p pulumiPlugin) version() string {
	if p.asked != "" {
		return p.asked
	}
	return p.found.Version
}

func (p pulumiPlugin) Open(_, dir string) provider.Provider {
	return pulumirpc.Open(p.options(dir))
}

// builtinPlugin serves the resources the Pulumi engine implements itself, in process.
type builtinPlugin struct{}

// Version is empty: the builtin provider is the engine's, it has no plugin version.
func (builtinPlugin) Version() string { return "" }

func (builtinPlugin) Open(_, _ string) provider.Provider { return pulumibuiltin.Provider{} }

// OpenMapped is Open for a provider resource with envVarMappings (engine.EnvMappingPlugin).
func (p pulumiPlugin) OpenMapped(_, dir string, mappings map[string]string) provider.Provider {
	o := p.options(dir)
	o.EnvVarMappings = mappings
	return pulumirpc.Open(o)
}

var (
	_ engine.SchemaPlugin     = pulumiPlugin{}
	_ engine.EnvMappingPlugin = pulumiPlugin{}
)
