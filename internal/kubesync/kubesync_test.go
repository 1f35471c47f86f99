package kubesync

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/addr"
	"github.com/cairn-dev/cairn/internal/kubetypes"
)

// TestConfigurationIsLiteral: an object's strings are text in the stack's configuration,
// never Terraform expressions (a tenant's "${file(...)}" would otherwise read the server's
// files into the object's status).
func TestConfigurationIsLiteral(t *testing.T) {
	typ := kubetypes.TypeOf(addr.Provider{Host: addr.DefaultRegistryHost, Namespace: "hashicorp", Type: "random"}, "3.9.0", "random_pet")
	files, err := Configuration([]object{{typ: typ, name: "my-pet.x", spec: map[string]any{
		"prefix":  `${file("/etc/passwd")}`,
		"keepers": map[string]any{"%{if true}k": "a${b}"},
		"length":  float64(2),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(files["main.tf.json"]), &cfg); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"terraform": map[string]any{"required_providers": map[string]any{
			"random": map[string]any{"source": "registry.terraform.io/hashicorp/random", "version": "= 3.9.0"}}},
		"resource": map[string]any{"random_pet": map[string]any{"o_my_pet_dot_x": map[string]any{
			"prefix":  `$${file("/etc/passwd")}`,
			"keepers": map[string]any{"%%{if true}k": "a$${b}"},
			"length":  float64(2),
		}}},
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}
