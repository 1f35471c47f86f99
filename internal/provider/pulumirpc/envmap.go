package pulumirpc

import "strings"

// withEnvVarMappings applies a provider resource's envVarMappings to the plugin's environment
// env as pulumi v3.260.0 does: for each KEY: NAME, when env holds KEY the plugin also sees
// NAME with KEY's value, over any NAME env already holds. env is what the plugin may see
// (cairn's own settings are already out), so a mapping cannot reach them.
func withEnvVarMappings(env []string, mappings map[string]string) []string {
	if len(mappings) == 0 {
		return env
	}
	vals := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vals[k] = v
		}
	}
	set := map[string]string{}
	for from, to := range mappings {
		if v, ok := vals[from]; ok {
			set[to] = v
		}
	}
	if len(set) == 0 {
		return env
	}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := set[k]; !over {
			out = append(out, kv)
		}
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	return out
}
