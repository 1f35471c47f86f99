package template

import (
	"context"
	"time"

	"github.com/zclconf/go-cty/cty"
)

// StateFormat writes a stack's state in its tool's own state file format and reads one back
// (cairn state pull and push), for dialects whose format is not the engine's own terraform
// state (DialectPolicy.StateFiles). The engine gathers the snapshot; the format only encodes.
type StateFormat interface {
	// Name names the format in messages ("a Pulumi deployment").
	Name() string
	// Encode writes snap. A snapshot holding secrets needs keys to seal them, unless
	// keys.ShowSecrets writes them in clear.
	Encode(ctx context.Context, st *Stack, snap StateSnapshot, keys StateKeys) ([]byte, error)
	// Decode reads a state file written by the tool (or by Encode) for st's resources.
	Decode(ctx context.Context, st *Stack, b []byte, keys StateKeys) (StateSnapshot, error)
}

// StateSnapshot is a stack's state as the engine keeps it, for a StateFormat.
type StateSnapshot struct {
	Stack     string // the stack's name
	StackID   string // its unique id, stable across deploys
	Resources []StateResource
	Outputs   []StateOutput // the stack outputs, evaluated on the stored resources
}

// StateResource is one stored resource. Inputs and outputs are objects whose secrets carry
// value.Sensitive marks.
type StateResource struct {
	Name     string // logical id
	Type     string
	ID       string
	Provider string // the address of the provider configuration that serves it
	Inputs   cty.Value
	Outputs  cty.Value
	Deps     []string // logical ids and provider addresses it depends on
	// Failed says the resource's last create failed after the provider made it.
	Failed bool
	// Protect and Retain are the protect flag and the retaining deletion policy the resource
	// is stored with (they outlive its declaration).
	Protect, Retain bool
	// PendingDelete says this is an old object of the resource Name awaiting deletion (a
	// create-first replacement whose new object's create failed): the resource itself is
	// stored beside it under the same name.
	PendingDelete bool
	// FailReason is why it failed, as stored (the provider's reasons, in the adapter's words).
	FailReason string
	Modified   time.Time
	// Private is the provider's opaque data of the resource (a Pulumi component's children).
	Private []byte
}

// StateOutput is one stack output.
type StateOutput struct {
	Name  string
	Value cty.Value
}

// StateKeys are what seals and opens secrets in a state file.
type StateKeys struct {
	// Passphrase seals secrets as the tool's passphrase secrets provider does.
	Passphrase string
	// ShowSecrets writes secrets in clear (as `pulumi stack export --show-secrets`).
	ShowSecrets bool
}
