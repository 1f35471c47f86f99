package provider

import (
	"context"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
)

// SchemaEphemeral is the schema of an ephemeral resource type (Terraform's `ephemeral` blocks).
const SchemaEphemeral SchemaKind = "ephemeral"

// EphemeralProvider is a provider with ephemeral resources (tfplugin 5.7 and 6.7): objects
// opened for the length of one run, whose values are never stored, renewed while the run
// needs them and closed at its end.
type EphemeralProvider interface {
	// ValidateEphemeral checks an ephemeral resource's configuration (which may hold unknowns).
	ValidateEphemeral(ctx context.Context, req EphemeralRequest) (diag.Diagnostics, error)
	// OpenEphemeral opens one; the configuration is wholly known.
	OpenEphemeral(ctx context.Context, req EphemeralRequest) (OpenEphemeralResponse, error)
	// RenewEphemeral extends what Open returned, before its RenewAt passes.
	RenewEphemeral(ctx context.Context, req RenewEphemeralRequest) (RenewEphemeralResponse, error)
	// CloseEphemeral releases it.
	CloseEphemeral(ctx context.Context, req RenewEphemeralRequest) (diag.Diagnostics, error)
}

// EphemeralRequest names an ephemeral resource type and gives its configuration.
type EphemeralRequest struct {
	Type   string
	Config cty.Value
}

// OpenEphemeralResponse is an opened ephemeral resource: its value (the sensitive attributes
// marked), the provider's private data for Renew and Close, and when to renew (zero: never).
type OpenEphemeralResponse struct {
	Result      cty.Value
	Private     []byte
	RenewAt     time.Time
	Diagnostics diag.Diagnostics
}

// RenewEphemeralRequest renews or closes an opened ephemeral resource.
type RenewEphemeralRequest struct {
	Type    string
	Private []byte
}

// RenewEphemeralResponse is a renewal: new private data, and the next renewal time.
type RenewEphemeralResponse struct {
	Private     []byte
	RenewAt     time.Time
	Diagnostics diag.Diagnostics
}
