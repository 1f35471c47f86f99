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
	for _, bad := range []string{"provider.time", `provider["x"].a.b`, `xprovider["x"]`} {
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
