package pulumiyaml

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// TestPluginDownloadURLs: a package declaration's downloadUrl and the pluginDownloadURL option
// are kept where Pulumi keeps them. Default providers are one per URL, named with it
// (default_9_0_0_http_/example.com) and exported with __internal.pluginDownloadURL and the
// stack's config; an explicit provider stores the URL under __internal: its option's, else
// the declaration's unless it pins a version.
func TestPluginDownloadURLs(t *testing.T) {
	st := mustParse(t, map[string]string{
		"Pulumi.yaml": "name: p\nruntime: yaml\n",
		"Main.yaml": `resources:
  a: {type: config:Resource, properties: {text: a}}
  same: {type: config:Resource, properties: {text: b}, options: {pluginDownloadURL: "http://example.com"}}
  custom: {type: config:Resource, properties: {text: c}, options: {pluginDownloadURL: "https://custom.test/p1?v=$${VERSION}"}}
  prov: {type: "pulumi:providers:config", properties: {name: explicit}}
  provURL: {type: "pulumi:providers:config", properties: {name: explicit}, options: {pluginDownloadURL: "https://other.test"}}
  provPinned: {type: "pulumi:providers:config", properties: {name: explicit}, options: {version: 9.0.0}}
`,
		"sdks/config.yaml": "packageDeclarationVersion: 1\nname: config\nversion: 9.0.0\ndownloadUrl: http://example.com\n",
		"Pulumi.dev.yaml":  "config:\n  config:name: hello\n",
	}, nil)
	decl := DefaultProviderAddr("config") + "@http://example.com"
	custom := DefaultProviderAddr("config") + "@https://custom.test/p1?v=${VERSION}"
	for name, want := range map[string]string{"a": decl, "same": decl, "custom": custom} {
		if got := st.Resource(name).Provider; got != want {
			t.Errorf("%s is served by %q, want %q", name, got, want)
		}
	}
	for _, addr := range []string{decl, custom} {
		if ProviderResource(addr) != "" {
			t.Errorf("ProviderResource(%q) = %q, want a default provider", addr, ProviderResource(addr))
		}
		if st.Provider(addr) == nil {
			t.Errorf("no provider configuration %s", addr)
		}
	}
	if got, want := st.Policy.URN(decl, ""), "urn:pulumi:dev::p::pulumi:providers:config::default_9_0_0_http_/example.com"; got != want {
		t.Errorf("URN of the default provider = %q, want %q", got, want)
	}
	internal := func(name string) cty.Value {
		v := eval(t, st.Resource(name).Properties, scope{})
		if !v.Type().HasAttribute("__internal") {
			return cty.NilVal
		}
		return v.GetAttr("__internal")
	}
	url := func(s string) cty.Value {
		return cty.ObjectVal(map[string]cty.Value{"pluginDownloadURL": cty.StringVal(s)})
	}
	if got := internal("prov"); got == cty.NilVal || !got.RawEquals(url("http://example.com")) {
		t.Errorf("prov's __internal = %#v, want the declaration's URL", got)
	}
	if got := internal("provURL"); got == cty.NilVal || !got.RawEquals(url("https://other.test")) {
		t.Errorf("provURL's __internal = %#v, want its option's URL", got)
	}
	if got := internal("provPinned"); got != cty.NilVal {
		t.Errorf("provPinned (a version option) has __internal %#v; Pulumi gives it none", got)
	}

	snap := template.StateSnapshot{Stack: "dev", StackID: "sid", Resources: []template.StateResource{
		{Name: "a", Type: "config:index:Resource", ID: "id-a", Provider: decl,
			Inputs: cty.ObjectVal(map[string]cty.Value{"text": cty.StringVal("a")}), Outputs: cty.EmptyObjectVal},
		{Name: "custom", Type: "config:index:Resource", ID: "id-c", Provider: custom,
			Inputs: cty.ObjectVal(map[string]cty.Value{"text": cty.StringVal("c")}), Outputs: cty.EmptyObjectVal},
	}}
	b, err := st.Policy.StateFormat.Encode(context.Background(), st, snap, template.StateKeys{ShowSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Deployment struct {
			Resources []struct {
				URN     string         `json:"urn"`
				Inputs  map[string]any `json:"inputs"`
				Outputs map[string]any `json:"outputs"`
			} `json:"resources"`
		} `json:"deployment"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	type io struct{ Inputs, Outputs map[string]any }
	got := map[string]io{}
	for _, r := range d.Deployment.Resources {
		got[r.URN] = io{r.Inputs, r.Outputs}
	}
	want := map[string]io{
		"urn:pulumi:dev::p::pulumi:providers:config::default_9_0_0_http_/example.com": {
			Inputs:  map[string]any{"__internal": map[string]any{"pluginDownloadURL": "http://example.com"}, "name": "hello", "version": "9.0.0"},
			Outputs: map[string]any{"name": "hello", "version": "9.0.0"}},
		"urn:pulumi:dev::p::pulumi:providers:config::default_9_0_0_https_/custom.test/p1_v___VERSION_": {
			Inputs:  map[string]any{"__internal": map[string]any{"pluginDownloadURL": "https://custom.test/p1?v=${VERSION}"}, "name": "hello", "version": "9.0.0"},
			Outputs: map[string]any{"name": "hello", "version": "9.0.0"}},
	}
	for urn, w := range want {
		if diff := cmp.Diff(w, got[urn]); diff != "" {
			t.Errorf("%s: -want +got\n%s", urn, diff)
		}
	}
}

// TestDefaultProviderSecretConfigExported: a secret stack config value of a default provider
// is in its exported inputs, sealed.
func TestDefaultProviderSecretConfigExported(t *testing.T) {
	st := mustParse(t, map[string]string{
		"Pulumi.yaml": "name: p\nruntime: yaml\nresources:\n  a: {type: config:Resource, options: {version: 9.0.0}}\n",
	}, nil)
	cfg := st.Provider(DefaultProviderAddr("config"))
	cfg.Config = literalConfig{cty.ObjectVal(map[string]cty.Value{"name": value.Secret(cty.StringVal("hush"))})}
	snap := template.StateSnapshot{Stack: "dev", StackID: "sid", Resources: []template.StateResource{
		{Name: "a", Type: "config:index:Resource", ID: "id-a", Provider: DefaultProviderAddr("config"), Inputs: cty.EmptyObjectVal, Outputs: cty.EmptyObjectVal}}}
	b, err := st.Policy.StateFormat.Encode(context.Background(), st, snap, template.StateKeys{Passphrase: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !json.Valid(b) || strings.Contains(s, "hush") || !strings.Contains(s, `"ciphertext"`) {
		t.Errorf("the secret config is not sealed in the export:\n%s", s)
	}
}

// TestPropertyDeps: each property the program sets records the resources and invokes its
// value uses, through variables too; a property that uses none has an empty entry; dependsOn
// is not a property's.
func TestPropertyDeps(t *testing.T) {
	st := mustParse(t, map[string]string{"Pulumi.yaml": `name: p
runtime: yaml
variables:
  v: ${c0.out}
  got:
    fn::invoke:
      function: simple:index:fn
      arguments: {x: "${a.value}"}
resources:
  a: {type: simple:index:Resource, properties: {value: true}}
  c0: {type: simple:index:Resource}
  c:
    type: simple:index:Resource
    properties:
      value: "x-${a.value}-${v}"
      key: ${v}
      plain: 3
      fromInvoke: ${got}
    options: {dependsOn: ["${c0}"]}
`}, nil)
	c := st.Resource("c").PropertyDeps
	// an invoke counts as what its arguments use: a, through the variable
	want := map[string][]string{"value": {"a", "c0"}, "key": {"c0"}, "plain": {}, "fromInvoke": {"a"}}
	if d := cmp.Diff(want, c); d != "" {
		t.Errorf("c's property deps: -want +got\n%s", d)
	}
	if d := st.Resource("c0").PropertyDeps; d != nil {
		t.Errorf("c0 sets no property, has %v", d)
	}
}
