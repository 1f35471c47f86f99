package tfplugin

import (
	"context"
	"errors"

	"github.com/zclconf/go-cty/cty"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairn-dev/cairn/internal/diag"
)

// protocolClient is one plugin protocol version spoken over a gRPC connection. The lifecycle
// code (Provider) is written once against it; conn5.go and conn6.go adapt tfplugin5 and
// tfplugin6. Values travel as msgpack bytes of the schema's implied type; diagnostics come
// back already converted. An adapter only translates messages: it never retries, never
// interprets values and never looks at the connection's transport, so it works over
// go-plugin's connection as well as over any other grpc.ClientConnInterface.
type protocolClient interface {
	version() int
	getMetadata(ctx context.Context) (metadata, error)
	// getSchemas also returns the answer's wire form, for the disk cache (schemacache.go).
	getSchemas(ctx context.Context) (*schemas, []byte, error)
	validateProviderConfig(ctx context.Context, config []byte) (diag.Diagnostics, error)
	configureProvider(ctx context.Context, terraformVersion string, config []byte) (diag.Diagnostics, error)
	validateResourceConfig(ctx context.Context, typ string, config []byte) (diag.Diagnostics, error)
	validateDataResourceConfig(ctx context.Context, typ string, config []byte) (diag.Diagnostics, error)
	upgradeResourceState(ctx context.Context, typ string, version int64, rawJSON []byte) (dynValue, diag.Diagnostics, error)
	readResource(ctx context.Context, req readRequest) (readResult, error)
	planResourceChange(ctx context.Context, req planRequest) (planResult, error)
	applyResourceChange(ctx context.Context, req applyRequest) (applyResult, error)
	importResourceState(ctx context.Context, typ, id string) ([]importedResource, diag.Diagnostics, error)
	readDataSource(ctx context.Context, typ string, config, providerMeta []byte) (dynValue, diag.Diagnostics, error)
	stopProvider(ctx context.Context) (string, error)
}

// newProtocolClient returns the adapter for protocol version v over cc.
func newProtocolClient(cc grpc.ClientConnInterface, v int) (protocolClient, error) {
	switch v {
	case 5:
		return newConn5(cc), nil
	case 6:
		return newConn6(cc), nil
	}
	return nil, errors.New("unsupported plugin protocol version; cairn speaks 5 and 6")
}

// dynValue is a DynamicValue as received: msgpack, or JSON from servers that send it.
type dynValue struct {
	msgpack, json []byte
}

// metadata is GetMetadata's answer.
type metadata struct {
	caps      serverCaps
	resources []string
	data      []string
	diags     diag.Diagnostics
}

type readRequest struct {
	typ          string
	state        []byte
	private      []byte
	providerMeta []byte
}

type readResult struct {
	state   dynValue
	private []byte
	diags   diag.Diagnostics
}

type planRequest struct {
	typ                     string
	prior, proposed, config []byte
	priorPrivate            []byte
	providerMeta            []byte
}

type planResult struct {
	planned         dynValue
	requiresReplace []cty.Path
	private         []byte
	legacy          bool
	diags           diag.Diagnostics
}

type applyRequest struct {
	typ                    string
	prior, planned, config []byte
	plannedPrivate         []byte
	providerMeta           []byte
}

type applyResult struct {
	state   dynValue
	private []byte
	legacy  bool
	diags   diag.Diagnostics
}

type importedResource struct {
	typ     string
	state   dynValue
	private []byte
}

// isUnimplemented reports whether the server does not know the RPC (an older provider).
func isUnimplemented(err error) bool {
	return status.Code(err) == codes.Unimplemented
}
