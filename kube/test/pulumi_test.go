package test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// pulumiProgram is a Pulumi YAML project: the CRD, n widgets that wait for it and a consumer
// reading the first one's status.endpoint.
func pulumiProgram(t *testing.T, ns string, n int) string {
	res := map[string]any{"crd": map[string]any{"type": "cairn:kubernetes:Object", "properties": map[string]any{"manifest": crdManifest(t)}}}
	for i := range n {
		res[fmt.Sprintf("w%03d", i)] = map[string]any{"type": "cairn:kubernetes:Object",
			"properties": map[string]any{"manifest": widgetManifest(fmt.Sprintf("w%03d", i), ns, i%10), "timeout": "120s"},
			"options":    map[string]any{"dependsOn": []any{"${crd}"}}}
	}
	res["consumer"] = map[string]any{"type": "cairn:kubernetes:Object",
		"properties": map[string]any{"manifest": widgetManifest("consumer", ns, 2, "${w000.status.endpoint}")}}
	prog := map[string]any{"name": "kubes", "runtime": "yaml", "resources": res,
		"outputs": map[string]any{"endpoint": "${w000.status.endpoint}"}}
	b, err := yaml.Marshal(prog)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPulumiStack is TestCloudFormationStack as a Pulumi YAML program.
func TestPulumiStack(t *testing.T) {
	requireKubectl(t)
	s := startServer(t)
	s.startController(500 * time.Millisecond)
	dir := filepath.Join(s.dir, "pulumi")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Pulumi.yaml"), []byte(pulumiProgram(t, "pulumi-ns", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	s.deployStack(dir, "pkubes", "pulumi-ns")
	s.deleteStack("pkubes")
}
