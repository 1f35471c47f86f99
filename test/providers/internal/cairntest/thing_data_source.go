package cairntest

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// thingDataSource is the data source cairntest_thing: a thing looked up by id.
type thingDataSource struct {
	client *client
}

type thingDataModel struct {
	ID        types.String `tfsdk:"id"`
	Name      types.String `tfsdk:"name"`
	Size      types.Int64  `tfsdk:"size"`
	Tags      types.Map    `tfsdk:"tags"`
	Secret    types.String `tfsdk:"secret"`
	CreatedAt types.String `tfsdk:"created_at"`
	Revision  types.Int64  `tfsdk:"revision"`
	FailOn    types.String `tfsdk:"fail_on"`
	Rules     types.List   `tfsdk:"rules"`
}

func (d *thingDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_thing"
}

func (d *thingDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A thing looked up by id; a missing thing is an error.",
		Attributes: map[string]schema.Attribute{
			"id":         schema.StringAttribute{Required: true},
			"name":       schema.StringAttribute{Computed: true},
			"size":       schema.Int64Attribute{Computed: true},
			"tags":       schema.MapAttribute{Computed: true, ElementType: types.StringType},
			"secret":     schema.StringAttribute{Computed: true, Sensitive: true},
			"created_at": schema.StringAttribute{Computed: true},
			"revision":   schema.Int64Attribute{Computed: true},
			"fail_on":    schema.StringAttribute{Computed: true},
			"rules": schema.ListAttribute{
				Computed:    true,
				Description: "The thing's rule blocks, as a list of objects {port, protocol}.",
				ElementType: types.ObjectType{AttrTypes: ruleAttrTypes},
			},
		},
	}
}

func (d *thingDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, _ *datasource.ConfigureResponse) {
	if c, ok := req.ProviderData.(*client); ok {
		d.client = c
	}
}

func (d *thingDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !configured(d.client, &resp.Diagnostics) {
		return
	}
	var id types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("id"), &id)...)
	if resp.Diagnostics.HasError() {
		return
	}
	rec, found, err := loadThing(d.client.stateDir, id.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("cairntest: cannot read thing", err.Error())
		return
	}
	if !found {
		resp.Diagnostics.AddAttributeError(path.Root("id"), "cairntest: thing not found",
			fmt.Sprintf("No thing with id %q in %s.", id.ValueString(), d.client.stateDir))
		return
	}
	m, _, diags := modelFromRecord(ctx, rec)
	resp.Diagnostics.Append(diags...)
	rules, diags := types.ListValueFrom(ctx, types.ObjectType{AttrTypes: ruleAttrTypes}, m.Rule)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &thingDataModel{
		ID: m.ID, Name: m.Name, Size: m.Size, Tags: m.Tags, Secret: m.Secret,
		CreatedAt: m.CreatedAt, Revision: m.Revision, FailOn: m.FailOn, Rules: rules,
	})...)
}
