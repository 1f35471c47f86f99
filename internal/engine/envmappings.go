package engine

import (
	"fmt"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/template"
)

// EnvMappingPlugin is a Plugin whose instances take environment variable mappings
// (template.ProviderConfig.EnvVarMappings: Pulumi's envVarMappings).
type EnvMappingPlugin interface {
	Plugin
	// OpenMapped is Open for an instance whose process sees each variable KEY of mappings
	// under the name VALUE too.
	OpenMapped(name, dir string, mappings map[string]string) provider.Provider
}

// openMapped opens the instance of provider configuration cfg, with its mappings when it has
// some; a plugin that cannot take them is refused rather than run without them.
func openMapped(pkg Plugin, cfg *template.ProviderConfig, dir string) (provider.Provider, error) {
	if len(cfg.EnvVarMappings) == 0 {
		return pkg.Open(cfg.Name, dir), nil
	}
	mp, ok := pkg.(EnvMappingPlugin)
	if !ok {
		return nil, fmt.Errorf("provider %s: its plugin cannot take envVarMappings", cfg.Addr)
	}
	return mp.OpenMapped(cfg.Name, dir, cfg.EnvVarMappings), nil
}
