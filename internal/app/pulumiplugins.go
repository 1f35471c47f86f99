package app

import (
	"context"
	"log/slog"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/provider"
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
		finder := pulumifind.Finder{PluginDirs: dirs}
		for _, l := range r.Local { // the project's plugins: (the engine allowed them)
			finder.Project = append(finder.Project, pulumifind.ProjectPlugin{Name: pkg, Path: l.Dir, Version: l.Version})
		}
		found, err := finder.Find(pkg, r.Versions)
		if err != nil {
			diags = diags.Append(diag.Errorf(r.Range, "", "%s", err))
			continue
		}
		out[r.Source] = pulumiPlugin{pkg: pkg, asked: r.Versions, found: found, log: log}
	}
	return out, rest, diags
}

// pulumiPlugin is one found Pulumi plugin; each Open is its own process, started on first use.
type pulumiPlugin struct {
	pkg   string
	asked string // the version the program pinned, "" for any
	found pulumifind.Plugin
	log   *slog.Logger
}

func (p pulumiPlugin) Version() string { return p.found.Version }

// PackageSchema reads the plugin's package schema, from the disk cache when it was read
// before (engine.SchemaPlugin).
func (p pulumiPlugin) PackageSchema(ctx context.Context) ([]byte, error) {
	cache, _ := tfinstall.CacheDir() // none: read from the plugin every time
	return pulumirpc.Schema(ctx, pulumirpc.Options{Package: p.pkg, Executable: p.found.Executable, Version: p.version(),
		Log: p.log, SchemaCacheDir: cache})
}

func (p pulumiPlugin) version() string {
	if p.asked != "" {
		return p.asked
	}
	return p.found.Version
}

func (p pulumiPlugin) Open(_, dir string) provider.Provider {
	return pulumirpc.Open(pulumirpc.Options{Package: p.pkg, Executable: p.found.Executable, Dir: dir, Version: p.version(), Log: p.log})
}

// OpenMapped is Open for a provider resource with envVarMappings (engine.EnvMappingPlugin).
func (p pulumiPlugin) OpenMapped(_, dir string, mappings map[string]string) provider.Provider {
	return pulumirpc.Open(pulumirpc.Options{Package: p.pkg, Executable: p.found.Executable, Dir: dir, Version: p.version(), Log: p.log,
		EnvVarMappings: mappings})
}

var (
	_ engine.SchemaPlugin     = pulumiPlugin{}
	_ engine.EnvMappingPlugin = pulumiPlugin{}
)
