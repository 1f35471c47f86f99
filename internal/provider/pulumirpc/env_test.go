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

// A plugin that writes without ever ending its line is logged in cut lines, not buffered
// without bound.
func TestLineLogBoundsALineThatNeverEnds(t *testing.T) {
	l := &lineLog{tail: &tail{}, name: "p"}
	chunk := []byte(strings.Repeat("x", 4096))
	for range 1024 { // 4 MiB, no newline
		if _, err := l.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if len(l.buf) > maxLogLine {
		t.Fatalf("%d bytes buffered", len(l.buf))
	}
}
