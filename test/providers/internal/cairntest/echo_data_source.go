package cairntest

import (
	"context"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// echoDataSource is cairntest_echo: it returns its input, and counts the things in the
// state directory.
type echoDataSource struct {
	client *client
}

type echoModel struct {
	Input  types.String `tfsdk:"input"`
	Output types.String `tfsdk:"output"`
	Length types.Int64  `tfsdk:"length"`
	Things types.Int64  `tfsdk:"things"`
}

func (d *echoDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_echo"
}

func (d *echoDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Echoes its input.",
		Attributes: map[string]schema.Attribute{
			"input":  schema.StringAttribute{Required: true},
			"output": schema.StringAttribute{Computed: true, Description: "The input."},
			"length": schema.Int64Attribute{Computed: true, Description: "The input's length in characters."},
			"things": schema.Int64Attribute{Computed: true, Description: "How many things the state directory holds."},
		},
	}
}

func (d *echoDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, _ *datasource.ConfigureResponse) {
	if c, ok := req.ProviderData.(*client); ok {
		d.client = c
	}
}

func (d *echoDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !configured(d.client, &resp.Diagnostics) {
		return
	}
	var m echoModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	n, err := countThings(d.client.stateDir)
	if err != nil {
		resp.Diagnostics.AddError("cairntest: cannot count things", err.Error())
		return
	}
	m.Output = m.Input
	m.Length = types.Int64Value(int64(utf8.RuneCountInString(m.Input.ValueString())))
	m.Things = types.Int64Value(int64(n))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
