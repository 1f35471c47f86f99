package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var _ resource.ResourceWithModifyPlan = (*objectResource)(nil)

// ModifyPlan replaces the object when what names it changes (kind, name, namespace, cluster),
// and validates the manifest before anything is applied: a server-side dry-run apply, which
// runs the type's whole schema pipeline (unknown fields, defaults, OpenAPI validation, CEL
// rules) and answers with the paths of the offending fields. A kind that does not exist yet
// (its CRD is made by the same deploy) is validated when it is applied.
func (r *objectResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan objectModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...); resp.Diagnostics.HasError() {
		return
	}
	if !req.State.Raw.IsNull() {
		var state objectModel
		if resp.Diagnostics.Append(req.State.Get(ctx, &state)...); resp.Diagnostics.HasError() {
			return
		}
		// What names the object decides between an update and a replacement, even when other
		// parts of the manifest are not known yet; when a part of the name is not known, the
		// object may become another: a replacement.
		oldID, _ := identity(state.Manifest)
		newID, known := identity(plan.Manifest)
		if !known || oldID != newID {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("manifest"))
		}
		if plan.Kubeconfig.IsUnknown() || plan.Context.IsUnknown() ||
			state.Kubeconfig.ValueString() != plan.Kubeconfig.ValueString() || state.Context.ValueString() != plan.Context.ValueString() {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("context"))
		}
	}
	if !wholly(plan.Manifest) || plan.Kubeconfig.IsUnknown() || plan.Context.IsUnknown() {
		return // validated when applied
	}
	t, ds := r.target(&plan)
	if resp.Diagnostics.Append(ds...); resp.Diagnostics.HasError() {
		return
	}
	ri, err := t.c.resourceFor(ctx, t.obj, false)
	if err != nil {
		if isNoMatch(err) {
			return
		}
		resp.Diagnostics.AddAttributeError(path.Root("manifest"), "Cannot check the manifest", err.Error())
		return
	}
	body, err := json.Marshal(t.obj.Object)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("manifest"), "Invalid manifest", err.Error())
		return
	}
	force := true
	_, err = ri.Patch(ctx, t.obj.GetName(), "application/apply-patch+yaml", body,
		metav1.PatchOptions{FieldManager: FieldManager, Force: &force, FieldValidation: "Strict", DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("manifest"), fmt.Sprintf("Invalid %s", describe(t.obj)), apiMessage(err))
	}
}

// identity is what names the object a manifest describes: group, kind, namespace and name.
// known is false when any of them is not known yet.
func identity(d types.Dynamic) (id string, known bool) {
	if d.IsNull() || d.IsUnknown() || d.IsUnderlyingValueUnknown() || d.IsUnderlyingValueNull() {
		return "", false
	}
	tv, err := d.UnderlyingValue().ToTerraformValue(context.Background())
	if err != nil {
		return "", false
	}
	var parts []string
	for _, p := range [][]string{{"apiVersion"}, {"kind"}, {"metadata", "namespace"}, {"metadata", "name"}} {
		s, ok := stringAt(tv, p)
		if !ok {
			return "", false
		}
		if p[0] == "apiVersion" { // the group: a new version of the same kind is the same object
			if i := strings.LastIndex(s, "/"); i >= 0 {
				s = s[:i]
			} else {
				s = ""
			}
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "|"), true
}

// stringAt is the string at path in an object value: "" when an attribute is absent or null,
// ok false when a value on the way is not known.
func stringAt(v tftypes.Value, path []string) (string, bool) {
	for _, name := range path {
		if !v.IsKnown() {
			return "", false
		}
		if v.IsNull() {
			return "", true
		}
		var m map[string]tftypes.Value
		if err := v.As(&m); err != nil {
			return "", true
		}
		next, ok := m[name]
		if !ok {
			return "", true
		}
		v = next
	}
	if !v.IsKnown() {
		return "", false
	}
	var s string
	if v.IsNull() || v.As(&s) != nil {
		return "", true
	}
	return s, true
}
