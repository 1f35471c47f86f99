// Package tfplugin is cairn's client of Terraform and OpenTofu provider plugins: it launches a
// provider binary with the go-plugin handshake terraform uses, speaks tfplugin5 or tfplugin6
// gRPC to it, and does what terraform core does around the calls (decode configuration by
// schema, build the proposed new state, pass private data through, upgrade stored state), so
// that the engine sees an ordinary provider.Provider.
package tfplugin

import (
	"context"
	"fmt"

	"google.golang.org/grpc"

	tf5 "github.com/cairn-dev/cairn/internal/tfplugin5"
	tf6 "github.com/cairn-dev/cairn/internal/tfplugin6"
)

// conn speaks one protocol version over any gRPC connection: go-plugin's for a local binary,
// or (a later transport) an HTTP envelope.
//
// tfplugin5 and tfplugin6 share the field numbers of every message cairn sends or receives
// except the schema (TestMessagesShareFieldNumbers pins this), so one client uses the tfplugin6
// messages for both and only the method names differ; schemas are decoded per version.
type conn struct {
	cc      grpc.ClientConnInterface
	version int
}

// method names by protocol version.
var methods = map[string][2]string{
	"GetMetadata":          {"/tfplugin5.Provider/GetMetadata", "/tfplugin6.Provider/GetMetadata"},
	"GetSchema":            {"/tfplugin5.Provider/GetSchema", "/tfplugin6.Provider/GetProviderSchema"},
	"ValidateProvider":     {"/tfplugin5.Provider/PrepareProviderConfig", "/tfplugin6.Provider/ValidateProviderConfig"},
	"ValidateResource":     {"/tfplugin5.Provider/ValidateResourceTypeConfig", "/tfplugin6.Provider/ValidateResourceConfig"},
	"ValidateData":         {"/tfplugin5.Provider/ValidateDataSourceConfig", "/tfplugin6.Provider/ValidateDataResourceConfig"},
	"UpgradeResourceState": {"/tfplugin5.Provider/UpgradeResourceState", "/tfplugin6.Provider/UpgradeResourceState"},
	"Configure":            {"/tfplugin5.Provider/Configure", "/tfplugin6.Provider/ConfigureProvider"},
	"ReadResource":         {"/tfplugin5.Provider/ReadResource", "/tfplugin6.Provider/ReadResource"},
	"PlanResourceChange":   {"/tfplugin5.Provider/PlanResourceChange", "/tfplugin6.Provider/PlanResourceChange"},
	"ApplyResourceChange":  {"/tfplugin5.Provider/ApplyResourceChange", "/tfplugin6.Provider/ApplyResourceChange"},
	"ImportResourceState":  {"/tfplugin5.Provider/ImportResourceState", "/tfplugin6.Provider/ImportResourceState"},
	"ReadDataSource":       {"/tfplugin5.Provider/ReadDataSource", "/tfplugin6.Provider/ReadDataSource"},
	"Stop":                 {"/tfplugin5.Provider/Stop", "/tfplugin6.Provider/StopProvider"},
}

func (c *conn) invoke(ctx context.Context, method string, req, resp any) error {
	m, ok := methods[method]
	if !ok {
		return fmt.Errorf("tfplugin: unknown method %s", method)
	}
	path := m[1]
	if c.version == 5 {
		path = m[0]
	}
	return c.cc.Invoke(ctx, path, req, resp)
}

// schema fetches the provider's schemas in the version's own messages.
func (c *conn) schema(ctx context.Context) (*schemas, error) {
	if c.version == 5 {
		resp := new(tf5.GetProviderSchema_Response)
		if err := c.invoke(ctx, "GetSchema", new(tf5.GetProviderSchema_Request), resp); err != nil {
			return nil, err
		}
		return schemasFrom5(resp)
	}
	resp := new(tf6.GetProviderSchema_Response)
	if err := c.invoke(ctx, "GetSchema", new(tf6.GetProviderSchema_Request), resp); err != nil {
		return nil, err
	}
	return schemasFrom6(resp)
}
