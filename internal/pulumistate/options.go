package pulumistate

import (
	"slices"

	"github.com/cairn-dev/cairn/internal/template"
)

// replacesWith says whether resource name's dependency dep is there only for its replaceWith
// option: Pulumi's state keeps it in replaceWith, not in dependencies.
func replacesWith(st *template.Stack, name, dep string) bool {
	if st == nil {
		return false
	}
	res := st.Resource(name)
	return res != nil && slices.Contains(res.ReplaceWith, dep)
}

// withEnvVarMappings adds a provider resource's envVarMappings option (its configuration's,
// addr) to its inputs' __internal, as Pulumi keeps it.
func withEnvVarMappings(inputs map[string]any, st *template.Stack, addr string) {
	if st == nil {
		return
	}
	cfg := st.Provider(addr)
	if cfg == nil || len(cfg.EnvVarMappings) == 0 {
		return
	}
	internal, _ := inputs["__internal"].(map[string]any)
	if internal == nil {
		internal = map[string]any{}
		inputs["__internal"] = internal
	}
	m := make(map[string]any, len(cfg.EnvVarMappings))
	for k, v := range cfg.EnvVarMappings {
		m[k] = v
	}
	internal["envVarMappings"] = m
}
