package cairntest

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Values of fail_on. The planned (new) value governs create and update, the prior state's
// value governs delete.
const (
	FailCreate        = "create"         // Create fails; nothing is created.
	FailCreatePartial = "create_partial" // Create writes the thing, returns its state and fails (terraform taints it).
	FailUpdate        = "update"         // Update fails; the prior state stands.
	FailDelete        = "delete"         // Delete fails; the thing stays.
	FailWarn          = "warn"           // Plan, create and update succeed with a warning.
)

// FailureSummary is the summary of every forced failure's error diagnostic.
const FailureSummary = "cairntest: forced failure"

// WarningSummary is the summary of the warning that fail_on = "warn" asks for.
const WarningSummary = "cairntest: requested warning"

var (
	_ resource.ResourceWithConfigure      = (*thingResource)(nil)
	_ resource.ResourceWithImportState    = (*thingResource)(nil)
	_ resource.ResourceWithValidateConfig = (*thingResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*thingResource)(nil)
)

// thingResource is cairntest_thing: a JSON file <state_dir>/thing-<id>.json.
type thingResource struct {
	protocol int
	client   *client
}

func (r *thingResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_thing"
}

func (r *thingResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A thing kept as a JSON file in the provider's state directory.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				Required:      true,
				Description:   "Changing it replaces the thing.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"size": schema.Int64Attribute{
				Optional:    true,
				Description: "Updated in place; above 100 a validation warning.",
			},
			"tags": schema.MapAttribute{
				ElementType: types.StringType,
				Optional:    true,
			},
			"secret": schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
			},
			"created_at": schema.StringAttribute{
				Computed:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"revision": schema.Int64Attribute{
				Computed:    true,
				Description: "1 on create, one more on every update; unknown in a plan that changes anything.",
			},
			"fail_on": schema.StringAttribute{
				Optional:    true,
				Description: "Forces a failure: create, create_partial, update or delete; or warn for warnings.",
				Validators: []validator.String{
					stringvalidator.OneOf(FailCreate, FailCreatePartial, FailUpdate, FailDelete, FailWarn),
				},
			},
		},
		Blocks: map[string]schema.Block{
			"rule": schema.ListNestedBlock{
				NestedObject: schema.NestedBlockObject{
					Attributes: map[string]schema.Attribute{
						"port": schema.Int64Attribute{
							Required:   true,
							Validators: []validator.Int64{int64validator.Between(1, 65535)},
						},
						"protocol": schema.StringAttribute{
							Optional: true,
							Computed: true,
							Default:  stringdefault.StaticString(defaultProtocol),
						},
					},
				},
			},
		},
	}
	if r.protocol == 6 {
		resp.Schema.Attributes["settings"] = schema.SingleNestedAttribute{
			Optional:    true,
			Description: "A nested attribute: served only over protocol 6.",
			Attributes: map[string]schema.Attribute{
				"mode":     schema.StringAttribute{Optional: true},
				"replicas": schema.Int64Attribute{Optional: true},
			},
		}
	}
}

func (r *thingResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if c, ok := req.ProviderData.(*client); ok {
		r.client = c
	}
}

// configured reports whether the provider has been configured, adding an error if not.
func configured(c *client, diags *diag.Diagnostics) bool {
	if c == nil {
		diags.AddError("cairntest: provider not configured", "The provider's Configure was not called before this operation.")
		return false
	}
	return true
}

func forcedFailure(diags *diag.Diagnostics, op, name string) {
	diags.AddError(FailureSummary, fmt.Sprintf("fail_on asks the %s of thing %q to fail.", op, name))
}

func requestedWarning(diags *diag.Diagnostics, op, name string) {
	diags.AddWarning(WarningSummary, fmt.Sprintf("fail_on = %q: a warning from the %s of thing %q.", FailWarn, op, name))
}

func (r *thingResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var size types.Int64
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("size"), &size)...)
	if !size.IsNull() && !size.IsUnknown() && size.ValueInt64() > 100 {
		resp.Diagnostics.AddAttributeWarning(path.Root("size"), "size is large",
			fmt.Sprintf("size is %d; cairntest accepts it, but warns above 100.", size.ValueInt64()))
	}
}

func (r *thingResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var failOn, name types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("fail_on"), &failOn)...)
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("name"), &name)...)
	if failOn.ValueString() == FailWarn {
		requestedWarning(&resp.Diagnostics, "plan", name.ValueString())
	}
}

func (r *thingResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !configured(r.client, &resp.Diagnostics) {
		return
	}
	plan, settings, diags := getThing(ctx, r.protocol, req.Plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	rec, diags := recordFromModel(ctx, plan, settings)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	failOn := plan.FailOn.ValueString()
	if failOn == FailCreate {
		forcedFailure(&resp.Diagnostics, "create", rec.Name)
		return
	}
	rec.ID = newID(8)
	rec.CreatedAt = time.Now().UTC().Format(time.RFC3339Nano)
	rec.Revision = 1
	if err := saveThing(r.client.stateDir, rec); err != nil {
		resp.Diagnostics.AddError("cairntest: cannot write thing", err.Error())
		return
	}
	r.setState(ctx, &resp.State, &resp.Diagnostics, rec)
	switch failOn {
	case FailCreatePartial:
		forcedFailure(&resp.Diagnostics, "create", rec.Name)
	case FailWarn:
		requestedWarning(&resp.Diagnostics, "create", rec.Name)
	}
}

func (r *thingResource) setState(ctx context.Context, s setter, diags *diag.Diagnostics, rec thingRecord) {
	m, settings, d := modelFromRecord(ctx, rec)
	diags.Append(d...)
	if diags.HasError() {
		return
	}
	diags.Append(setThing(ctx, r.protocol, s, m, settings)...)
}

func (r *thingResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if !configured(r.client, &resp.Diagnostics) {
		return
	}
	var id types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("id"), &id)...)
	if resp.Diagnostics.HasError() {
		return
	}
	rec, found, err := loadThing(r.client.stateDir, id.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("cairntest: cannot read thing", err.Error())
		return
	}
	if !found {
		resp.State.RemoveResource(ctx)
		return
	}
	r.setState(ctx, &resp.State, &resp.Diagnostics, rec)
}

func (r *thingResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if !configured(r.client, &resp.Diagnostics) {
		return
	}
	plan, settings, diags := getThing(ctx, r.protocol, req.Plan)
	resp.Diagnostics.Append(diags...)
	prior, _, diags := getThing(ctx, r.protocol, req.State)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	rec, diags := recordFromModel(ctx, plan, settings)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	failOn := plan.FailOn.ValueString()
	if failOn == FailUpdate {
		forcedFailure(&resp.Diagnostics, "update", rec.Name)
		return
	}
	rec.ID = prior.ID.ValueString()
	rec.CreatedAt = prior.CreatedAt.ValueString()
	rec.Revision = prior.Revision.ValueInt64() + 1
	if err := saveThing(r.client.stateDir, rec); err != nil {
		resp.Diagnostics.AddError("cairntest: cannot write thing", err.Error())
		return
	}
	r.setState(ctx, &resp.State, &resp.Diagnostics, rec)
	if failOn == FailWarn {
		requestedWarning(&resp.Diagnostics, "update", rec.Name)
	}
}

func (r *thingResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if !configured(r.client, &resp.Diagnostics) {
		return
	}
	var id, name, failOn types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("id"), &id)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("name"), &name)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("fail_on"), &failOn)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if failOn.ValueString() == FailDelete {
		forcedFailure(&resp.Diagnostics, "delete", name.ValueString())
		return
	}
	if err := deleteThing(r.client.stateDir, id.ValueString()); err != nil {
		resp.Diagnostics.AddError("cairntest: cannot delete thing", err.Error())
	}
}

func (r *thingResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}
