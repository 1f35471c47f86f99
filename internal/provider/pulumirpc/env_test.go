package pulumirpc

import (
	"slices"
	"strings"
	"testing"
)

// A plugin, possibly a tenant's, never sees cairn's own settings (its token, its secrets key).
func TestPluginEnvDropsCairnSettings(t *testing.T) {
	t.Setenv("CAIRN_TOKEN", "s3cret")
	t.Setenv("CAIRN_SECRETS_KEY", "k3y")
	env := pluginEnv("proj", "")
	for _, kv := range env {
		if strings.HasPrefix(kv, "CAIRN_") {
			t.Errorf("the plugin gets %s", kv)
		}
	}
	if !slices.Contains(env, "PULUMI_PROJECT=proj") {
		t.Errorf("no PULUMI_PROJECT in %v", env)
	}
}
