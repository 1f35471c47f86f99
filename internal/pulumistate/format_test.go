package pulumistate

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

func testStack() *template.Stack {
	return &template.Stack{Resources: []*template.Resource{
		{Name: "a", Type: "simple:index:Resource", Provider: "pulumi:providers:simple::default"},
		{Name: "b", Type: "simple:index:Resource", Provider: "pulumi:providers:simple::default", PreventDestroy: true,
			Options: template.Options{PropertyDeps: map[string][]string{"value": {"a"}, "pw": {}}}},
	}}
}

func testFormat() Format {
	return Format{Project: "proj", DefaultProvider: func(addr string) (string, string, bool) {
		if addr == "pulumi:providers:simple::default" {
			return "simple", "2.0.0", true
		}
		return "", "", false
	}}
}

func testSnapshot() template.StateSnapshot {
	secret := value.Secret(cty.StringVal("hush"))
	return template.StateSnapshot{Stack: "dev", StackID: "sid", Resources: []template.StateResource{
		// b first: the encoding must put a (its dependency) before it.
		{Name: "b", Type: "simple:index:Resource", ID: "id-b", Provider: "pulumi:providers:simple::default",
			Inputs: cty.ObjectVal(map[string]cty.Value{"value": cty.True, "pw": secret}),
			Outputs: cty.ObjectVal(map[string]cty.Value{"value": cty.True, "pw": secret, "n": cty.NumberIntVal(3),
				"list": cty.TupleVal([]cty.Value{cty.StringVal("x"), cty.NullVal(cty.String)})}),
			Deps: []string{"a", "pulumi:providers:simple::default"}, Protect: true},
		{Name: "a", Type: "simple:index:Resource", ID: "id-a", Provider: "pulumi:providers:simple::default",
			Inputs: cty.ObjectVal(map[string]cty.Value{"value": cty.False}), Outputs: cty.ObjectVal(map[string]cty.Value{"value": cty.False})},
	}, Outputs: []template.StateOutput{{Name: "out", Value: secret}, {Name: "plain", Value: cty.StringVal("p")}}}
}

func TestEncodeAsPulumiExports(t *testing.T) {
	b, err := testFormat().Encode(context.Background(), testStack(), testSnapshot(), template.StateKeys{Passphrase: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "hush") {
		t.Fatalf("a secret is in clear:\n%s", b)
	}
	var ud untypedDeployment
	if err := json.Unmarshal(b, &ud); err != nil || ud.Version != 3 {
		t.Fatalf("version %d, %v", ud.Version, err)
	}
	var d deployment
	if err := json.Unmarshal(ud.Deployment, &d); err != nil {
		t.Fatal(err)
	}
	if d.SecretsProviders == nil || d.SecretsProviders.Type != "passphrase" {
		t.Fatalf("secrets provider %+v", d.SecretsProviders)
	}
	var urns []string
	for _, r := range d.Resources {
		urns = append(urns, r.URN)
	}
	want := []string{
		"urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev",
		"urn:pulumi:dev::proj::pulumi:providers:simple::default_2_0_0",
		"urn:pulumi:dev::proj::simple:index:Resource::a",
		"urn:pulumi:dev::proj::simple:index:Resource::b",
	}
	if strings.Join(urns, "\n") != strings.Join(want, "\n") {
		t.Fatalf("resources in order:\n%s\nwant:\n%s", strings.Join(urns, "\n"), strings.Join(want, "\n"))
	}
	prov, b2 := d.Resources[1], d.Resources[3]
	if b2.Provider != prov.URN+"::"+prov.ID || b2.Parent != want[0] || !b2.Protect {
		t.Errorf("b: provider %q parent %q protect %v", b2.Provider, b2.Parent, b2.Protect)
	}
	if len(b2.Dependencies) != 1 || b2.Dependencies[0] != want[2] {
		t.Errorf("b's dependencies: %v", b2.Dependencies)
	}
	// Every input property, with the resources it comes from (none: empty), as Pulumi writes them.
	if pd := b2.PropertyDependencies; len(pd) != 2 || len(pd["value"]) != 1 || pd["value"][0] != want[2] || pd["pw"] == nil || len(pd["pw"]) != 0 {
		t.Errorf("b's propertyDependencies: %#v", pd)
	}
	if prov.Inputs["version"] != "2.0.0" {
		t.Errorf("provider inputs %v", prov.Inputs)
	}
	// The same stack pulled again names its providers the same.
	again, err := testFormat().Encode(context.Background(), testStack(), testSnapshot(), template.StateKeys{ShowSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(again), prov.ID) || !strings.Contains(string(again), `"plaintext": "\"hush\""`) {
		t.Errorf("second pull (secrets shown):\n%s", again)
	}
}

func TestDecodeRoundTrip(t *testing.T) {
	ctx := context.Background()
	b, err := testFormat().Encode(ctx, testStack(), testSnapshot(), template.StateKeys{Passphrase: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := testFormat().Decode(ctx, testStack(), b, template.StateKeys{Passphrase: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Resources) != 2 {
		t.Fatalf("resources %+v", snap.Resources)
	}
	byName := map[string]template.StateResource{}
	for _, r := range snap.Resources {
		byName[r.Name] = r
	}
	b2 := byName["b"]
	if b2.ID != "id-b" || len(b2.Deps) != 1 || b2.Deps[0] != "a" || b2.Provider != "pulumi:providers:simple::default" {
		t.Errorf("b: %+v", b2)
	}
	pw := b2.Outputs.GetAttr("pw")
	if !pw.HasMark(value.Sensitive) {
		t.Errorf("the secret came back unmarked: %#v", pw)
	}
	if v, _ := pw.Unmark(); v.AsString() != "hush" {
		t.Errorf("secret = %#v", v)
	}
	if n := b2.Outputs.GetAttr("n"); !n.RawEquals(cty.NumberIntVal(3)) {
		t.Errorf("n = %#v", n)
	}

	if _, err := testFormat().Decode(ctx, testStack(), b, template.StateKeys{Passphrase: "other"}); err == nil || strings.Contains(err.Error(), "hush") {
		t.Errorf("a wrong passphrase: %v", err)
	}
	if _, err := testFormat().Decode(ctx, testStack(), b, template.StateKeys{}); !errors.Is(err, ErrNeedsKeys) {
		t.Errorf("no passphrase: %v", err)
	}
}

func TestEncodeNeedsKeysForSecrets(t *testing.T) {
	_, err := testFormat().Encode(context.Background(), testStack(), testSnapshot(), template.StateKeys{})
	if !errors.Is(err, ErrNeedsKeys) {
		t.Fatalf("err = %v", err)
	}
	snap := testSnapshot()
	snap.Resources[0].Inputs, snap.Resources[0].Outputs, snap.Outputs = cty.EmptyObjectVal, cty.EmptyObjectVal, nil
	if _, err := testFormat().Encode(context.Background(), testStack(), snap, template.StateKeys{}); err != nil {
		t.Fatalf("no secrets, no keys needed: %v", err)
	}
}

func TestDecodeRefuses(t *testing.T) {
	ctx := context.Background()
	for name, doc := range map[string]string{
		"not json":   `{`,
		"version":    `{"version":9,"deployment":{}}`,
		"pending":    `{"version":3,"deployment":{"manifest":{},"pending_operations":[{}]}}`,
		"unknown":    `{"version":3,"deployment":{"manifest":{},"resources":[{"urn":"urn:pulumi:dev::proj::simple:index:Resource::zzz","custom":true,"type":"simple:index:Resource","id":"x"}]}}`,
		"other type": `{"version":3,"deployment":{"manifest":{},"resources":[{"urn":"urn:pulumi:dev::proj::other:index:Thing::a","custom":true,"type":"other:index:Thing","id":"x"}]}}`,
		"bad urn":    `{"version":3,"deployment":{"manifest":{},"resources":[{"urn":"nope","custom":true,"type":"simple:index:Resource","id":"x"}]}}`,
		"twice":      `{"version":3,"deployment":{"manifest":{},"resources":[{"urn":"urn:pulumi:dev::proj::simple:index:Resource::a","custom":true,"type":"simple:index:Resource","id":"x"},{"urn":"urn:pulumi:dev::proj::simple:index:Resource::a","custom":true,"type":"simple:index:Resource","id":"y"}]}}`,
		"no id":      `{"version":3,"deployment":{"manifest":{},"resources":[{"urn":"urn:pulumi:dev::proj::simple:index:Resource::a","custom":true,"type":"simple:index:Resource"}]}}`,
		"secret stack outputs": `{"version":3,"deployment":{"manifest":{},"resources":[{"urn":"urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev","custom":false,"type":"pulumi:pulumi:Stack",` +
			`"outputs":{"4dabf18193072939515e22adb298388d":"1b47061264138c4ac30d75fd1eb44270","plaintext":"{\"a\":1}"}}]}}`,
		"secret inputs": `{"version":3,"deployment":{"manifest":{},"resources":[{"urn":"urn:pulumi:dev::proj::simple:index:Resource::a","custom":true,"type":"simple:index:Resource","id":"x",` +
			`"inputs":{"4dabf18193072939515e22adb298388d":"1b47061264138c4ac30d75fd1eb44270","plaintext":"\"x\""}}]}}`,
		"awaiting deletion": `{"version":3,"deployment":{"manifest":{},"resources":[{"urn":"urn:pulumi:dev::proj::simple:index:Resource::a","custom":true,"type":"simple:index:Resource","id":"x"},` +
			`{"urn":"urn:pulumi:dev::proj::simple:index:Resource::a","custom":true,"type":"simple:index:Resource","id":"old","delete":true}]}}`,
		"kms": `{"version":3,"deployment":{"manifest":{},"secrets_providers":{"type":"awskms"},"resources":[{"urn":"urn:pulumi:dev::proj::simple:index:Resource::a","custom":true,"type":"simple:index:Resource","id":"x","inputs":{"s":{"4dabf18193072939515e22adb298388d":"1b47061264138c4ac30d75fd1eb44270","ciphertext":"x"}}}]}}`,
	} {
		if _, err := testFormat().Decode(ctx, testStack(), []byte(doc), template.StateKeys{Passphrase: "pw"}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestCrypterOpensWhatItSeals(t *testing.T) {
	salt, c, err := NewSalt("pw")
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := c.Seal("value")
	if err != nil {
		t.Fatal(err)
	}
	c2, err := ParseSalt(salt, "pw")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c2.Open(sealed); err != nil || got != "value" {
		t.Fatalf("open = %q, %v", got, err)
	}
	if _, err := ParseSalt(salt, "wrong"); err == nil {
		t.Fatal("a wrong passphrase was accepted")
	}
	if _, err := c2.Open("v1:AAAA:BBBB"); err == nil {
		t.Fatal("a damaged value opened")
	}
}

func TestPaths(t *testing.T) {
	p := cty.GetAttrPath("details").IndexInt(0).GetAttr("key")
	if got := pathString(p); got != "details[0].key" {
		t.Errorf("pathString = %q", got)
	}
	if got := pathString(cty.GetAttrPath("tags").Index(cty.StringVal("a.b"))); got != `tags["a.b"]` {
		t.Errorf("pathString = %q", got)
	}
}

// A deployment's numbers are bounded as every number cairn stores: a huge one is refused, not
// kept to cost hundreds of megabytes when it is written out.
func TestDecodeRefusesHugeNumbers(t *testing.T) {
	doc := `{"version":3,"deployment":{"manifest":{},"resources":[{"urn":"urn:pulumi:dev::proj::simple:index:Resource::a","custom":true,"type":"simple:index:Resource","id":"x","inputs":{"n":1e999999999}}]}}`
	if _, err := testFormat().Decode(context.Background(), testStack(), []byte(doc), template.StateKeys{}); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Fatalf("err = %v", err)
	}
}

func TestDecodeRefusesComponents(t *testing.T) {
	b := []byte(`{"version":3,"deployment":{"manifest":{"time":"2026-01-01T00:00:00Z","magic":"","version":""},"resources":[` +
		`{"urn":"urn:pulumi:s::p::pulumi:pulumi:Stack::p-s","custom":false,"type":"pulumi:pulumi:Stack"},` +
		`{"urn":"urn:pulumi:s::p::component:index:C::c","custom":false,"type":"component:index:C"}]}}`)
	_, err := Format{Project: "p"}.Decode(context.Background(), &template.Stack{}, b, template.StateKeys{})
	if err == nil || !strings.Contains(err.Error(), "component resource urn:pulumi:s::p::component:index:C::c") {
		t.Errorf("Decode of a deployment with a component: %v", err)
	}
}
