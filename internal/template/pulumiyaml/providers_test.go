package pulumiyaml

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/value"
)

// TestDefaultProviders: a resource without a provider option is served by its package's
// default provider, one per package, configured from the stack's `<pkg>:key` values as
// strings; its requirement's source says it is a Pulumi package; an explicit provider
// resource is served by its own configuration, and the resources naming it by that too.
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
    properties: {seed: abc}
  c:
    type: random:RandomId
    options: {provider: "${prov}"}
`, "Pulumi.dev.yaml": `config:
  simple:region: west
  simple:retries: 3
  other:key: x
  p:own: y
`}, nil)
	want := DefaultProviderAddr("simple")
	for _, name := range []string{"a", "b"} {
		if got := st.Resource(name).Provider; got != want {
			t.Errorf("%s is served by %q, want %q", name, got, want)
		}
	}
	explicit := ProviderAddr("random", "prov")
	if got := st.Resource("prov").Provider; got != explicit {
		t.Errorf("the explicit provider prov is served by %q, want its own configuration %q", got, explicit)
	}
	if got := st.Resource("c").Provider; got != explicit {
		t.Errorf("c is served by %q, want %q", got, explicit)
	}
	if ProviderResource(explicit) != "prov" || ProviderResource(want) != "" {
		t.Errorf("ProviderResource(%q) = %q, ProviderResource(%q) = %q", explicit, ProviderResource(explicit), want, ProviderResource(want))
	}
	cfg := st.Provider(want)
	if cfg == nil || cfg.Name != "simple" {
		t.Fatalf("providers %+v", st.Providers)
	}
	v, ds := cfg.Config.Eval(nil)
	if ds.HasErrors() || !v.RawEquals(cty.ObjectVal(map[string]cty.Value{"region": cty.StringVal("west"), "retries": cty.StringVal("3")})) {
		t.Errorf("default configuration %#v %v", v, ds)
	}
	pc := st.Provider(explicit)
	if pc == nil || pc.Name != "random" {
		t.Fatalf("no configuration %s in %+v", explicit, st.Providers)
	}
	if v, ds := pc.Config.Eval(scope{}); ds.HasErrors() || !v.RawEquals(cty.ObjectVal(map[string]cty.Value{"seed": cty.StringVal("abc")})) {
		t.Errorf("explicit configuration %#v %v", v, ds)
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

// TestProviderOptions: providers picks the provider of the resource's package, and a
// defaultProvider: true resource serves its package instead of a default provider.
func TestProviderOptions(t *testing.T) {
	st := mustParse(t, map[string]string{"Pulumi.yaml": `name: p
runtime: yaml
resources:
  p1:
    type: pulumi:providers:simple
    defaultProvider: true
  p2:
    type: pulumi:providers:random
  p3:
    type: pulumi:providers:simple
  a:
    type: simple:index:Resource
  b:
    type: random:RandomId
    options:
      providers: ["${p3}", "${p2}"]
  c:
    type: simple:index:Resource
    options:
      providers: {simple: "${p3}"}
`}, nil)
	got := map[string]string{}
	for _, r := range st.Resources {
		got[r.Name] = r.Provider
	}
	want := map[string]string{
		"p1": ProviderAddr("simple", "p1"), "p2": ProviderAddr("random", "p2"), "p3": ProviderAddr("simple", "p3"),
		"a": ProviderAddr("simple", "p1"), "b": ProviderAddr("random", "p2"), "c": ProviderAddr("simple", "p3"),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("providers: -want +got\n%s", d)
	}
	if deps := st.Resource("a").DependsOn; strings.Join(deps, ",") != "p1" {
		t.Errorf("a (served by the default provider p1) depends on %v", deps)
	}
	if st.Provider(DefaultProviderAddr("simple")) != nil {
		t.Error("a package with a defaultProvider: true resource still has a default provider")
	}
}

func TestProviderRefusals(t *testing.T) {
	for name, c := range map[string]struct{ main, want string }{
		"otherPackage": {"resources:\n  p:\n    type: pulumi:providers:random\n  r:\n    type: simple:index:Resource\n    options:\n      provider: ${p}\n",
			"${p} is a provider of package random; simple:index:Resource is of package simple"},
		"defaultOnResource": {"resources:\n  r:\n    type: simple:index:Resource\n    defaultProvider: true\n", "defaultProvider is only valid on a provider resource"},
		"twoDefaults": {"resources:\n  p:\n    type: pulumi:providers:simple\n    defaultProvider: true\n  q:\n    type: pulumi:providers:simple\n    defaultProvider: true\n",
			"package simple already has a default provider"},
	} {
		t.Run(name, func(t *testing.T) {
			_, ds := Parse(t.Context(), map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\n", "Main.yaml": c.main}, "dev", nil)
			if find(ds, c.want) == nil {
				t.Errorf("want %q, got %v", c.want, ds)
			}
		})
	}
}

// TestSecretProviderConfig: a secret stack value reaches the default provider as a secret.
func TestSecretProviderConfig(t *testing.T) {
	p := &parser{given: map[string]stackValue{"aws:password": {v: cty.StringVal("hunter2"), secret: true}}}
	v := p.stackProviderConfig("aws")
	if !value.IsSecret(v.GetAttr("password")) {
		t.Errorf("password is not secret: %#v", v)
	}
}
