package cairntest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// fastResource is cairntest_fast: it lives only in terraform state. Every operation returns at
// once without touching disk, for benchmarks with thousands of resources.
type fastResource struct{}

type fastModel struct {
	ID    types.String `tfsdk:"id"`
	Value types.String `tfsdk:"value"`
}

func (r *fastResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_fast"
}

func (r *fastResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A resource that exists only in state; create, update and delete return at once.",
		Attributes: map[string]schema.Attribute{
			"value": schema.StringAttribute{Optional: true},
			"id": schema.StringAttribute{
				Computed:      true,
				Description:   "fast-<8 hex of sha256(value)>-<8 random hex>; kept across updates.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
		},
	}
}

func (r *fastResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m fastModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	sum := sha256.Sum256([]byte(m.Value.ValueString()))
	m.ID = types.StringValue("fast-" + hex.EncodeToString(sum[:4]) + "-" + newID(4))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *fastResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {
	// The state is the resource: the framework hands it back unchanged.
}

func (r *fastResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m fastModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *fastResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {
	// Nothing to remove: the framework drops the state.
}
