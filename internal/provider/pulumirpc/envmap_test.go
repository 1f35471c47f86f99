package pulumirpc

import (
	"slices"
	"testing"
)

// envVarMappings give the plugin KEY's value under NAME too, over a NAME it had; a KEY that is
// not set maps nothing, and cairn's own settings, already out of env, cannot be mapped in.
func TestEnvVarMappingsApplied(t *testing.T) {
	env := []string{"MY_VAR=v1", "PROVIDER_VAR=old", "KEEP=k"}
	got := withEnvVarMappings(env, map[string]string{"MY_VAR": "PROVIDER_VAR", "UNSET": "TARGET", "CAIRN_TOKEN": "LEAK"})
	slices.Sort(got)
	want := []string{"KEEP=k", "MY_VAR=v1", "PROVIDER_VAR=v1"}
	if !slices.Equal(got, want) {
		t.Errorf("env = %v, want %v", got, want)
	}
	t.Setenv("CAIRN_TOKEN", "s3cret")
	for _, kv := range withEnvVarMappings(pluginEnv("p", ""), map[string]string{"CAIRN_TOKEN": "LEAK"}) {
		if kv == "LEAK=s3cret" {
			t.Errorf("a mapping reached cairn's own setting: %s", kv)
		}
	}
}
