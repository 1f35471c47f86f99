package pulumiyaml

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// replaceWith names resources (decided first); envVarMappings of a provider resource reach its
// provider configuration, values from config allowed.
func TestReplaceWithAndEnvVarMappings(t *testing.T) {
	fs := map[string]string{"Pulumi.yaml": `name: p
runtime: yaml
config:
  target: {type: string}
resources:
  prov:
    type: pulumi:providers:simple
    options:
      envVarMappings: {MY_VAR: '${target}', OTHER: PLAIN}
  a:
    type: simple:Resource
  b:
    type: simple:Resource
  r:
    type: simple:Resource
    options:
      replaceWith: ['${b}', '${a}']
      provider: ${prov}
`}
	st, ds := Parse(context.Background(), fs, "dev", map[string]string{"target": "PROVIDER_VAR"})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	r := st.Resource("r")
	if diff := cmp.Diff([]string{"a", "b"}, r.ReplaceWith); diff != "" {
		t.Errorf("ReplaceWith -want +got:\n%s", diff)
	}
	for _, d := range []string{"a", "b"} {
		if !contains(r.DependsOn, d) {
			t.Errorf("r does not depend on %s: %v", d, r.DependsOn)
		}
	}
	cfg := st.Provider(ProviderAddr("simple", "prov"))
	if cfg == nil {
		t.Fatal("no configuration for prov")
	}
	if diff := cmp.Diff(map[string]string{"MY_VAR": "PROVIDER_VAR", "OTHER": "PLAIN"}, cfg.EnvVarMappings); diff != "" {
		t.Errorf("EnvVarMappings -want +got:\n%s", diff)
	}
	if dp := st.Provider(DefaultProviderAddr("simple")); dp != nil && len(dp.EnvVarMappings) > 0 {
		t.Errorf("the default provider has mappings: %v", dp.EnvVarMappings)
	}
}

// Mappings must be a map of non-empty names known before the deploy.
func TestEnvVarMappingsRefusals(t *testing.T) {
	for name, c := range map[string]struct{ opts, want string }{
		"notMap":     {"envVarMappings: [A]", "envVarMappings must be a map of string"},
		"empty":      {"envVarMappings: {A: ''}", "variable names must not be empty"},
		"fromOutput": {"envVarMappings: {A: '${other.value}'}", "cannot depend on resources"},
	} {
		t.Run(name, func(t *testing.T) {
			fs := map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\nresources:\n  other:\n    type: x:y:Z\n  r:\n    type: pulumi:providers:x\n    options:\n      " + c.opts + "\n"}
			_, ds := Parse(context.Background(), fs, "dev", nil)
			d := find(ds, c.want)
			if d == nil {
				t.Fatalf("want %q, got %v", c.want, ds)
			}
			if d.Path != "resources.r.options.envVarMappings" || d.Range.Line != 9 {
				t.Errorf("at %s line %d, want resources.r.options.envVarMappings line 9", d.Path, d.Range.Line)
			}
		})
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
