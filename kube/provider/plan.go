package provider

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
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
	if !wholly(plan.Manifest) || plan.Kubeconfig.IsUnknown() || plan.Context.IsUnknown() {
		return
	}
	t, ds := r.target(&plan)
	if resp.Diagnostics.Append(ds...); resp.Diagnostics.HasError() {
		return
	}
	if !req.State.Raw.IsNull() {
		var state objectModel
		if resp.Diagnostics.Append(req.State.Get(ctx, &state)...); resp.Diagnostics.HasError() {
			return
		}
		if old, err := manifestObject(state.Manifest); err == nil && !sameObject(old, t.obj) {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("manifest"))
		}
		if state.Kubeconfig.ValueString() != plan.Kubeconfig.ValueString() || state.Context.ValueString() != plan.Context.ValueString() {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("context"))
		}
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
