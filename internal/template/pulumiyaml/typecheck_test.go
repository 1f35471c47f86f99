package pulumiyaml

import (
	"context"
	"testing"
)

// TestLiteralsTypedByTheSchema: literals the schema's input types cannot take are refused where
// they are written, as pulumi-yaml refuses them (a quoted "true" for a boolean too); numbers and
// booleans for a string, and computed values, are let through.
func TestLiteralsTypedByTheSchema(t *testing.T) {
	schema := func(context.Context, string, string) ([]byte, error) {
		return []byte(`{"resources": {"typed:index:Thing": {"inputProperties": {
  "flag": {"type": "boolean"}, "count": {"type": "integer"}, "ratio": {"type": "number"}, "name": {"type": "string"},
  "nums": {"type": "array", "items": {"type": "number"}}, "flags": {"type": "object", "additionalProperties": {"type": "boolean"}}}}}}`), nil
	}
	files := map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\n", "Main.yaml": `resources:
  bad:
    type: typed:Thing
    properties:
      flag: "true"
      count: "3"
      ratio: true
      nums: [1, "2"]
      flags: {a: true, b: "false"}
  good:
    type: typed:Thing
    properties:
      flag: ${bad.flag}
      count: 3
      ratio: 2
      name: 42
      nums: [1.5]
      flags: {a: false}
`}
	_, ds := ParseWith(context.Background(), files, "dev", nil, Options{Schema: schema})
	want := map[string]string{
		"resources.bad.properties.flag":    "Main.yaml:5:13: resources.bad.properties.flag: Cannot assign type 'string' to type 'boolean'",
		"resources.bad.properties.count":   "Main.yaml:6:14: resources.bad.properties.count: Cannot assign type 'string' to type 'integer'",
		"resources.bad.properties.ratio":   "Main.yaml:7:14: resources.bad.properties.ratio: Cannot assign type 'boolean' to type 'number'",
		"resources.bad.properties.nums[1]": "Main.yaml:8:17: resources.bad.properties.nums[1]: Cannot assign type 'string' to type 'number'",
		"resources.bad.properties.flags.b": "Main.yaml:9:27: resources.bad.properties.flags.b: Cannot assign type 'string' to type 'boolean'",
	}
	if len(ds) != len(want) {
		t.Errorf("%d diagnostics, want %d:\n%v", len(ds), len(want), ds)
	}
	for _, d := range ds {
		if w, ok := want[d.Path]; !ok || d.Error() != w {
			t.Errorf("got  %s\nwant %s", d.Error(), w)
		}
	}
}
