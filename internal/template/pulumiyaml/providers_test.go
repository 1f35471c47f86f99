package pulumiyaml

import (
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// TestDefaultProviders: a resource without a provider option is served by its package's
// default provider, one per package, configured with nothing; its requirement's source says
// it is a Pulumi package; an explicit provider resource gets none.
func TestDefaultProviders(t *testing.T) {
	st := mustParse(t, map[string]string{"Pulumi.yaml": `name: p
runtime: yaml
resources:
  a:
    type: simple:index:Resource
    properties: {value: true}
    options: {version: 2.0.0}
  b:
    type: simple:index:Resource
    properties: {value: false}
  prov:
    type: pulumi:providers:random
  c:
    type: random:RandomId
    options: {provider: "${prov}"}
`}, nil)
	want := DefaultProviderAddr("simple")
	for _, name := range []string{"a", "b"} {
		if got := st.Resource(name).Provider; got != want {
			t.Errorf("%s is served by %q, want %q", name, got, want)
		}
	}
	if got := st.Resource("prov").Provider; got != "" {
		t.Errorf("the explicit provider prov has provider %q", got)
	}
	if got := st.Resource("c").Provider; got != "prov" {
		t.Errorf("c is served by %q, want prov", got)
	}
	if len(st.Providers) != 1 || st.Providers[0].Addr != want || st.Providers[0].Name != "simple" {
		t.Fatalf("providers %+v", st.Providers)
	}
	if v, ds := st.Providers[0].Config.Eval(nil); ds.HasErrors() || !v.RawEquals(cty.EmptyObjectVal) {
		t.Errorf("default configuration %#v %v", v, ds)
	}
	req := st.Requirement("simple")
	if req == nil || req.Versions != "2.0.0" {
		t.Fatalf("requirement %+v", req)
	}
	if pkg, ok := PackageOf(req.Source); !ok || pkg != "simple" {
		t.Errorf("PackageOf(%q) = %q, %v", req.Source, pkg, ok)
	}
	if _, ok := PackageOf("registry.terraform.io/hashicorp/random"); ok {
		t.Error("a Terraform provider source reads as a Pulumi package")
	}
}
