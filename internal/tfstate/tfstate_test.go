package tfstate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

func TestParseAddr(t *testing.T) {
	cases := map[string]struct {
		in         string
		want       Addr
		wantConfig string
	}{
		"Plain":       {in: "time_static.t", want: Addr{Mode: Managed, Type: "time_static", Name: "t"}, wantConfig: "time_static.t"},
		"Count":       {in: "time_static.t[3]", want: Addr{Mode: Managed, Type: "time_static", Name: "t", Key: 3}, wantConfig: "time_static.t"},
		"ForEachDots": {in: `x.y["a.b[c]"]`, want: Addr{Mode: Managed, Type: "x", Name: "y", Key: "a.b[c]"}, wantConfig: "x.y"},
		"Data":        {in: "data.x.y", want: Addr{Mode: Data, Type: "x", Name: "y"}, wantConfig: "data.x.y"},
		"Modules": {in: `module.a["k"].module.b[0].x.y["z"]`,
			want: Addr{Module: `module.a["k"].module.b[0]`, Mode: Managed, Type: "x", Name: "y", Key: "z"}, wantConfig: "module.a.module.b.x.y"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseAddr(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseAddr(%q): -want +got:\n%s", tc.in, diff)
			}
			if s := got.String(); s != tc.in {
				t.Errorf("String() = %q, want %q", s, tc.in)
			}
			if c := got.Config(); c != tc.wantConfig {
				t.Errorf("Config() = %q, want %q", c, tc.wantConfig)
			}
		})
	}
	for _, bad := range []string{"", "x", "x.y.z", "module.m", `x.y["a`, "x.y[-1]", "x..y", "x.y."} {
		if _, err := ParseAddr(bad); err == nil {
			t.Errorf("ParseAddr(%q) succeeded, want an error", bad)
		}
	}
}

func TestProviderAddr(t *testing.T) {
	for _, s := range []string{`provider["registry.terraform.io/hashicorp/time"]`, `module.m.provider["example.com/a/b"].west`} {
		p, err := ParseProvider(s)
		if err != nil {
			t.Fatal(err)
		}
		if p.String() != s {
			t.Errorf("round trip of %s gave %s", s, p)
		}
	}
	// Sources are normalized as required_providers sources are.
	if p, err := ParseProvider(`module.m.provider["Example.COM/Ns/Thing"]`); err != nil || p.Source != "example.com/ns/Thing" || p.Module != "module.m" {
		t.Errorf("ParseProvider of a mixed-case source = %+v, %v", p, err)
	}
	for _, bad := range []string{"provider.time", `provider["x"].a.b`, `xprovider["x"]`, `module.m.x.provider["a/b"]`,
		`module.m["k"].provider["a/b"]`, `provider["a/b/c/d"]`, `provider["a b/c"]`} {
		if _, err := ParseProvider(bad); err == nil {
			t.Errorf("ParseProvider(%q) succeeded", bad)
		}
	}
}

func TestEncodeDecode(t *testing.T) {
	paths, err := MarshalPaths([]cty.Path{cty.GetAttrPath("secret"), cty.GetAttrPath("rule").IndexInt(1).GetAttr("p")})
	if err != nil {
		t.Fatal(err)
	}
	want := `[[{"type":"get_attr","value":"secret"}],[{"type":"get_attr","value":"rule"},{"type":"index","value":{"value":1,"type":"number"}},{"type":"get_attr","value":"p"}]]`
	if string(paths) != want {
		t.Errorf("MarshalPaths = %s\nwant %s", paths, want)
	}
	s := &State{Serial: 3, Lineage: "l", Resources: []Resource{
		{Mode: Managed, Type: "b", Name: "n", Provider: "p", Instances: []Instance{{IndexKey: "z"}, {IndexKey: 2}, {IndexKey: 10}, {IndexKey: "a"}}},
		{Module: "module.m", Mode: Managed, Type: "a", Name: "n", Provider: "p"},
		{Mode: Data, Type: "a", Name: "n", Provider: "p"},
	}}
	b, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range got.Resources {
		order = append(order, r.Module+"/"+r.Mode+"/"+r.Type)
	}
	if diff := cmp.Diff([]string{"/data/a", "/managed/b", "module.m/managed/a"}, order); diff != "" {
		t.Errorf("resource order: -want +got:\n%s", diff)
	}
	var keys []any
	for _, in := range got.Resources[1].Instances {
		keys = append(keys, NormalizeKey(in.IndexKey))
	}
	if diff := cmp.Diff([]any{2, 10, "a", "z"}, keys); diff != "" {
		t.Errorf("instance order: -want +got:\n%s", diff)
	}
	var raw map[string]any
	_ = json.Unmarshal(b, &raw)
	if raw["version"] != 4.0 || raw["check_results"] != nil {
		t.Errorf("header: %v", raw)
	}
	if _, err := Decode([]byte(`{"version": 3}`)); err == nil || !strings.Contains(err.Error(), "version 3 is not supported") {
		t.Errorf("Decode of version 3: %v", err)
	}
}

// TestDecodeRefuses: what terraform never writes, and what would make two instances one, is
// refused with what is wrong.
func TestDecodeRefuses(t *testing.T) {
	inst := func(key string) string { return `{"index_key": ` + key + `, "attributes": {}}` }
	res := func(module, typ, name string, instances ...string) string {
		m, _ := json.Marshal(module)
		return `{"module": ` + string(m) + `, "mode": "managed", "type": "` + typ + `", "name": "` + name + `", "provider": "p", "instances": [` +
			strings.Join(instances, ",") + `]}`
	}
	for name, tc := range map[string]struct{ resources, want string }{
		"FractionalKey":     {res("", "t", "n", inst("0.5")), "invalid instance key 0.5"},
		"NegativeKey":       {res("", "t", "n", inst("-1")), "invalid instance key -1"},
		"HugeKey":           {res("", "t", "n", inst("1e300")), "invalid instance key"},
		"BoolKey":           {res("", "t", "n", inst("true")), "invalid instance key true"},
		"DuplicateKey":      {res("", "t", "n", inst(`"a"`), inst(`"a"`)), `t.n["a"] appears twice`},
		"DuplicateNoKey":    {res("", "t", "n", inst("null"), inst("null")), `t.n appears twice`},
		"DuplicateResource": {res("", "t", "n", inst("0")) + "," + res("", "t", "n", inst("1")), "t.n appears twice"},
		"DuplicateInModule": {res(`module.m["x"]`, "t", "n") + "," + res(`module.m["x"]`, "t", "n"), `module.m["x"].t.n appears twice`},
		"BadName":           {res("", "t", "n[0]", inst("0")), `invalid resource name "n[0]"`},
		"BadType":           {res("", "a.b", "n"), `invalid resource type "a.b"`},
		"EmptyType":         {res("", "", "n"), `invalid resource type ""`},
		"BadModule":         {res("module.m.x", "t", "n"), `invalid module path "module.m.x"`},
		"ModuleWithoutName": {res("module", "t", "n"), `invalid module path "module"`},
		"KeyedModuleWord":   {res(`module["k"].m`, "t", "n"), "invalid module path"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Decode([]byte(`{"version": 4, "serial": 1, "lineage": "l", "resources": [` + tc.resources + `]}`))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode = %v, want an error saying %q", err, tc.want)
			}
		})
	}
	// The same key in another module instance, and a deposed object beside the current one,
	// are distinct.
	ok := res(`module.m["x"]`, "t", "n", inst("0")) + "," + res(`module.m["y"]`, "t", "n", inst("0"), `{"index_key": 0, "deposed": "d1", "attributes": {}}`)
	if _, err := Decode([]byte(`{"version": 4, "resources": [` + ok + `]}`)); err != nil {
		t.Errorf("Decode of distinct instances: %v", err)
	}
}
