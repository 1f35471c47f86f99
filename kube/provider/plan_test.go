package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func dyn(t *testing.T, v any) types.Dynamic {
	d, err := manifestValue(v.(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestIdentity: the object a manifest names is known even when other parts are not, and a
// new version of the same kind names the same object.
func TestIdentity(t *testing.T) {
	meta := map[string]any{"name": "w", "namespace": "ns"}
	a, ok := identity(dyn(t, map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta, "spec": map[string]any{"size": int64(1)}}))
	if !ok || a != "example.com|Widget|ns|w" {
		t.Fatalf("identity = %q, %v", a, ok)
	}
	b, ok := identity(dyn(t, map[string]any{"apiVersion": "example.com/v2", "kind": "Widget", "metadata": meta}))
	if !ok || b != a {
		t.Fatalf("a new version must name the same object: %q vs %q", b, a)
	}
	crd, ok := identity(dyn(t, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}))
	if !ok || crd != "|ConfigMap||c" {
		t.Fatalf("core kind without namespace: %q, %v", crd, ok)
	}
	// An unknown value anywhere in the manifest but the name leaves the identity known; an
	// unknown name does not.
	metaType := map[string]attr.Type{"name": types.StringType, "namespace": types.StringType}
	manifest := func(name, spec attr.Value) types.Dynamic {
		return types.DynamicValue(types.ObjectValueMust(
			map[string]attr.Type{"apiVersion": types.StringType, "kind": types.StringType,
				"metadata": types.ObjectType{AttrTypes: metaType}, "spec": types.DynamicType},
			map[string]attr.Value{"apiVersion": types.StringValue("example.com/v1"), "kind": types.StringValue("Widget"),
				"metadata": types.ObjectValueMust(metaType, map[string]attr.Value{"name": name, "namespace": types.StringValue("ns")}),
				"spec":     spec}))
	}
	if id, ok := identity(manifest(types.StringValue("w"), types.DynamicUnknown())); !ok || id != a {
		t.Fatalf("an unknown spec: identity %q, %v", id, ok)
	}
	if _, ok := identity(manifest(types.StringUnknown(), types.DynamicNull())); ok {
		t.Fatal("an unknown name must leave the identity unknown")
	}
	if _, ok := identity(types.DynamicUnknown()); ok {
		t.Fatal("an unknown manifest has no known identity")
	}
}
