package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// FieldManager is the server-side-apply manager of everything cairn applies.
const FieldManager = "cairn"

// DefaultTimeout bounds the wait for readiness and for deletion when the resource sets none.
const DefaultTimeout = 5 * time.Minute

type objectResource struct{ ep *endpoints }

type objectModel struct {
	Manifest   types.Dynamic `tfsdk:"manifest"`
	Kubeconfig types.String  `tfsdk:"kubeconfig"`
	Context    types.String  `tfsdk:"context"`
	Timeout    types.String  `tfsdk:"timeout"`
	Wait       types.Bool    `tfsdk:"wait"`
	ID         types.String  `tfsdk:"id"`
	UID        types.String  `tfsdk:"uid"`
	Status     types.Dynamic `tfsdk:"status"`
}

func (r *objectResource) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = "kubernetes_object"
}

func (r *objectResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A Kubernetes object, applied server-side by the field manager cairn and waited for until ready.",
		Attributes: map[string]schema.Attribute{
			"manifest": schema.DynamicAttribute{Required: true,
				Description: "The object: apiVersion, kind, metadata (name, and namespace for a namespaced kind) and the rest."},
			"kubeconfig": schema.StringAttribute{Optional: true, Sensitive: true,
				Description: "A kubeconfig's content naming the cluster; unset: cairn's own kube API, as the stack's tenant."},
			"context": schema.StringAttribute{Optional: true,
				Description: "The kubeconfig context to use; unset: its current context."},
			"timeout": schema.StringAttribute{Optional: true,
				Description: "How long to wait for readiness and for deletion, as a Go duration (5m when unset)."},
			"wait": schema.BoolAttribute{Optional: true,
				Description: "Whether to wait for readiness (true when unset)."},
			"id": schema.StringAttribute{Computed: true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"uid": schema.StringAttribute{Computed: true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"status": schema.DynamicAttribute{Computed: true,
				Description: "The object's status as last read: what its controller reports."},
		},
	}
}

func (r *objectResource) Configure(_ context.Context, req resource.ConfigureRequest, _ *resource.ConfigureResponse) {
	if ep, ok := req.ProviderData.(*endpoints); ok {
		r.ep = ep
	}
}

// target is what a model names: the endpoint and the object.
type target struct {
	c       *clients
	obj     *unstructured.Unstructured
	timeout time.Duration
	wait    bool
}

func (r *objectResource) target(m *objectModel) (*target, diag.Diagnostics) {
	var diags diag.Diagnostics
	obj, err := manifestObject(m.Manifest)
	if err != nil {
		diags.AddAttributeError(path.Root("manifest"), "Invalid manifest", err.Error())
		return nil, diags
	}
	t := &target{obj: obj, timeout: DefaultTimeout, wait: m.Wait.IsNull() || m.Wait.ValueBool()}
	if !m.Timeout.IsNull() && m.Timeout.ValueString() != "" {
		d, err := time.ParseDuration(m.Timeout.ValueString())
		if err != nil || d <= 0 {
			diags.AddAttributeError(path.Root("timeout"), "Invalid timeout", fmt.Sprintf("want a duration such as 90s or 5m, got %q", m.Timeout.ValueString()))
			return nil, diags
		}
		t.timeout = d
	}
	if r.ep == nil {
		diags.AddError("Provider not configured", "the kubernetes provider was not configured")
		return nil, diags
	}
	if t.c, err = r.ep.get(m.Kubeconfig.ValueString(), m.Context.ValueString()); err != nil {
		diags.AddAttributeError(path.Root("kubeconfig"), "Cannot reach the cluster", err.Error())
		return nil, diags
	}
	return t, diags
}

func (r *objectResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.apply(ctx, req.Plan.Get, &resp.State, &resp.Diagnostics, true)
}

func (r *objectResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.apply(ctx, req.Plan.Get, &resp.State, &resp.Diagnostics, false)
}

type stateSetter interface {
	Set(ctx context.Context, val any) diag.Diagnostics
}

func (r *objectResource) apply(ctx context.Context, get func(context.Context, any) diag.Diagnostics, state stateSetter, diags *diag.Diagnostics, create bool) {
	var m objectModel
	if diags.Append(get(ctx, &m)...); diags.HasError() {
		return
	}
	t, ds := r.target(&m)
	if diags.Append(ds...); diags.HasError() {
		return
	}
	ri, err := t.c.resourceFor(ctx, t.obj, true)
	if err != nil {
		diags.AddAttributeError(path.Root("manifest"), "Unknown kind", err.Error())
		return
	}
	if create {
		// A create does not take over an object someone else made (a stack's delete would
		// then destroy it); one cairn applied before is its own, as when a create is retried
		// after a restart.
		existing, err := ri.Get(ctx, t.obj.GetName(), metav1.GetOptions{})
		if err == nil && !managedBy(existing, FieldManager) {
			diags.AddError(fmt.Sprintf("%s already exists", describe(t.obj)),
				"it was not made by cairn: delete it, or give the object another name")
			return
		}
	}
	body, err := json.Marshal(t.obj.Object)
	if err != nil {
		diags.AddError("Invalid manifest", err.Error())
		return
	}
	force := true
	live, err := ri.Patch(ctx, t.obj.GetName(), "application/apply-patch+yaml", body,
		metav1.PatchOptions{FieldManager: FieldManager, Force: &force, FieldValidation: "Strict"})
	if err != nil {
		diags.AddError(fmt.Sprintf("Cannot apply %s", describe(t.obj)), apiMessage(err))
		return
	}
	if t.wait {
		if live, err = waitReady(ctx, ri, live, t.timeout); err != nil {
			diags.AddError(fmt.Sprintf("%s did not become ready", describe(t.obj)), err.Error())
			// The object exists: keep it in the state, so that a retry or a delete finds it.
		}
	}
	m.ID = types.StringValue(objectID(live))
	m.UID = types.StringValue(string(live.GetUID()))
	m.Status = statusValue(live)
	diags.Append(state.Set(ctx, &m)...)
}

func (r *objectResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	m, t, ri, gone := r.existing(ctx, req.State.Get, &resp.Diagnostics, "read")
	if gone {
		resp.State.RemoveResource(ctx)
	}
	if ri == nil {
		return
	}
	live, err := ri.Get(ctx, t.obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot read "+describe(t.obj), apiMessage(err))
		return
	}
	// Drift is what a refresh reads back: the fields cairn applied, as they are now.
	if m.Manifest, err = manifestValue(appliedFields(t.obj, live)); err != nil {
		resp.Diagnostics.AddError("Cannot read "+describe(t.obj), err.Error())
		return
	}
	m.UID = types.StringValue(string(live.GetUID()))
	m.Status = statusValue(live)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *objectResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	_, t, ri, _ := r.existing(ctx, req.State.Get, &resp.Diagnostics, "delete")
	if ri == nil {
		return
	}
	// Background: foreground deletion waits on a garbage collector, which only a cluster's
	// controller manager runs (cairn's kube API has none).
	policy := metav1.DeletePropagationBackground
	err := ri.Delete(ctx, t.obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &policy})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot delete "+describe(t.obj), apiMessage(err))
		return
	}
	if err := waitGone(ctx, ri, t.obj.GetName(), t.timeout); err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("%s was not deleted", describe(t.obj)), err.Error())
	}
}

// existing reads a stored object's model, its target and the client of its kind. ri is nil
// when the call cannot go on: diags say why, or gone says its kind no longer exists (its CRD
// was deleted, and the object with it).
func (r *objectResource) existing(ctx context.Context, get func(context.Context, any) diag.Diagnostics, diags *diag.Diagnostics, verb string) (m objectModel, t *target, ri dynamic.ResourceInterface, gone bool) {
	if diags.Append(get(ctx, &m)...); diags.HasError() {
		return m, nil, nil, false
	}
	t, ds := r.target(&m)
	if diags.Append(ds...); diags.HasError() {
		return m, nil, nil, false
	}
	ri, err := t.c.resourceFor(ctx, t.obj, false)
	if err != nil {
		if isNoMatch(err) {
			return m, t, nil, true
		}
		diags.AddError("Cannot "+verb+" "+describe(t.obj), err.Error())
		return m, t, nil, false
	}
	return m, t, ri, false
}

func (r *objectResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.AddError("Import not supported", "declare the object's manifest and deploy: server-side apply adopts an existing object")
}

// managedBy reports whether manager owns fields of obj.
func managedBy(obj *unstructured.Unstructured, manager string) bool {
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager == manager {
			return true
		}
	}
	return false
}
