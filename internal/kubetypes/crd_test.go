package kubetypes

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/addr"
	"github.com/cairn-dev/cairn/internal/provider"
)

func TestTypeOf(t *testing.T) {
	got := TypeOf(addr.Provider{Host: addr.DefaultRegistryHost, Namespace: "hashicorp", Type: "random"}, "3.9.0", "random_pet")
	want := Type{Provider: got.Provider, Version: "3.9.0", Name: "random_pet", Group: "random.hashicorp.tf.cairn.dev", Kind: "Pet", Plural: "pets"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatal(diff)
	}
	if got.CRDName() != "pets.random.hashicorp.tf.cairn.dev" {
		t.Fatal(got.CRDName())
	}
}

// TestCRD: configurable attributes in spec, computed ones in status.atProvider, sensitive
// computed ones nowhere, types mapped to structural OpenAPI.
func TestCRD(t *testing.T) {
	p := addr.Provider{Host: addr.DefaultRegistryHost, Namespace: "hashicorp", Type: "random"}
	crd := CRD(TypeOf(p, "3.9.0", "random_password"), provider.Schema{Attributes: []provider.Attribute{
		{Name: "id", Type: cty.String, Computed: true},
		{Name: "keepers", Type: cty.Map(cty.String), Optional: true},
		{Name: "length", Type: cty.Number, Required: true},
		{Name: "bcrypt_hash", Type: cty.String, Computed: true, Sensitive: true},
		{Name: "result", Type: cty.String, Computed: true, Sensitive: true},
		{Name: "upper", Type: cty.Bool, Optional: true, Computed: true},
		{Name: "numeric", Type: cty.List(cty.Number), Computed: true},
	}})
	b, _ := json.Marshal(crd)
	var got struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema struct {
						Properties struct {
							Spec struct {
								Properties map[string]any `json:"properties"`
								Required   []string       `json:"required"`
							} `json:"spec"`
							Status struct {
								Properties struct {
									AtProvider struct {
										Properties map[string]any `json:"properties"`
									} `json:"atProvider"`
								} `json:"properties"`
							} `json:"status"`
						} `json:"properties"`
					} `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	root := got.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties
	wantSpec := map[string]any{
		"keepers": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
		"length":  map[string]any{"type": "number"},
		"upper":   map[string]any{"type": "boolean"},
	}
	if diff := cmp.Diff(wantSpec, root.Spec.Properties); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"length"}, root.Spec.Required); diff != "" {
		t.Errorf("required (-want +got):\n%s", diff)
	}
	wantStatus := map[string]any{
		"id":      map[string]any{"type": "string"},
		"numeric": map[string]any{"type": "array", "items": map[string]any{"type": "number"}},
	}
	if diff := cmp.Diff(wantStatus, root.Status.Properties.AtProvider.Properties); diff != "" {
		t.Errorf("status.atProvider (-want +got):\n%s", diff)
	}
}
