// Package cairntest is a small terraform-plugin-framework provider that cairn's tests run as a
// real plugin binary over protocol 5 (cmd/cairntest5) or protocol 6 (cmd/cairntest6). Its
// resources are kept as JSON files in a state directory, so they are real and survive across
// processes (terraform starts a new provider process per command), and it can be told to fail,
// warn or drift so that a client's handling of each case can be exercised.
package cairntest

import (
	"context"
	"os"
	"path/filepath"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// TypeName is the provider's type name: resources and data sources are named cairntest_*.
const TypeName = "cairntest"

// Address is the provider's source address.
const Address = "registry.terraform.io/cairn-dev/cairntest"

// StateDirEnv names the environment variable that sets the state directory when the provider
// configuration has no state_dir.
const StateDirEnv = "CAIRNTEST_STATE_DIR"

// DefaultStateDir is the state directory used when neither state_dir nor CAIRNTEST_STATE_DIR
// is set. It is fixed (not a fresh temporary directory) so that things survive from one
// provider process to the next.
func DefaultStateDir() string { return filepath.Join(os.TempDir(), "cairntest-state") }

// New returns a constructor for the provider. protocol is the plugin protocol the binary
// serves (5 or 6): nested attributes exist only in protocol 6, so the attributes that use them
// (cairntest_thing.settings) are left out of the protocol 5 schema.
func New(version string, protocol int) func() provider.Provider {
	return func() provider.Provider {
		return &cairntestProvider{version: version, protocol: protocol}
	}
}

type cairntestProvider struct {
	version  string
	protocol int
}

// client is what Configure hands to resources and data sources.
type client struct {
	stateDir string
	protocol int
}

type providerModel struct {
	StateDir      types.String `tfsdk:"state_dir"`
	FailConfigure types.String `tfsdk:"fail_configure"`
	APIToken      types.String `tfsdk:"api_token"`
}

func (p *cairntestProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = TypeName
	resp.Version = p.version
}

func (p *cairntestProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Test provider for cairn: things kept as JSON files in a state directory.",
		Attributes: map[string]schema.Attribute{
			"state_dir": schema.StringAttribute{
				Optional:    true,
				Description: "Directory holding the things. Defaults to $" + StateDirEnv + ", else <tmp>/cairntest-state.",
			},
			"fail_configure": schema.StringAttribute{
				Optional:    true,
				Description: "When set, Configure fails with this text as the error summary.",
			},
			"api_token": schema.StringAttribute{
				Optional:    true,
				Sensitive:   true,
				Description: "Unused; a sensitive provider argument.",
			},
		},
	}
}

func (p *cairntestProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if s := cfg.FailConfigure.ValueString(); s != "" {
		resp.Diagnostics.AddError(s, "The cairntest provider's fail_configure argument is set, so Configure fails.")
		return
	}
	dir := cfg.StateDir.ValueString() // "" when null or unknown
	if dir == "" {
		dir = os.Getenv(StateDirEnv)
	}
	if dir == "" {
		dir = DefaultStateDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("state_dir"), "cairntest: cannot create the state directory", err.Error())
		return
	}
	c := &client{stateDir: dir, protocol: p.protocol}
	resp.ResourceData = c
	resp.DataSourceData = c
}

func (p *cairntestProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		func() resource.Resource { return &thingResource{protocol: p.protocol} },
		func() resource.Resource { return &fastResource{} },
	}
}

func (p *cairntestProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		func() datasource.DataSource { return &echoDataSource{} },
		func() datasource.DataSource { return &thingDataSource{} },
	}
}
