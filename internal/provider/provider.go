// Package provider is the seam between the engine and whatever manages a resource type:
// custom-resource handlers today, Terraform plugins and Pulumi providers later. It defines the
// Provider interface, its request and response types, and Registry, which maps a resource type
// to the provider that serves it. It never imports engine or state.
package provider

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
)

// Provider manages the resource types a Registry sends it. Every method returns promptly once
// ctx is done. A non-nil error means the call itself failed (transport, crash, timeout, bad
// reply); resp.Diagnostics are the provider talking to the user. Create, Update and Delete
// must be safe to call again with the same Token: the engine does so when it resumes an
// operation after a restart, and a provider that remembers the token returns the first call's
// outcome instead of acting twice.
type Provider interface {
	Capabilities() Capabilities
	Check(ctx context.Context, req CheckRequest) (CheckResponse, error)
	Diff(ctx context.Context, req DiffRequest) (DiffResponse, error)
	Create(ctx context.Context, req CreateRequest) (CreateResponse, error)
	Read(ctx context.Context, req ReadRequest) (ReadResponse, error)
	Update(ctx context.Context, req UpdateRequest) (UpdateResponse, error)
	Delete(ctx context.Context, req DeleteRequest) (DeleteResponse, error)

	// Schema describes a resource type, data source or the provider's own configuration, for
	// template languages that decode blocks by schema (the Terraform language). A provider
	// without schemas returns ErrNotSupported.
	Schema(ctx context.Context, req SchemaRequest) (Schema, error)
	// Configure gives the provider its configuration (a Terraform provider block) before any
	// other call of an operation. Config may hold unknowns during a preview.
	Configure(ctx context.Context, req ConfigureRequest) (ConfigureResponse, error)
	// ReadData reads a data source.
	ReadData(ctx context.Context, req ReadDataRequest) (ReadDataResponse, error)
	// Import adopts an existing object by its id and returns its state.
	Import(ctx context.Context, req ImportRequest) (ImportResponse, error)
	Close() error
}

// SchemaKind says what a Schema is about.
type SchemaKind string

const (
	SchemaResource SchemaKind = "resource"
	SchemaData     SchemaKind = "data"
	SchemaProvider SchemaKind = "provider"
)

// SchemaRequest names what to describe; Type is empty for SchemaProvider.
type SchemaRequest struct {
	Kind SchemaKind
	Type string
}

// Schema is a block's structure: Spec decodes a configuration body into the value the
// provider expects (its type is ImpliedType).
type Schema struct {
	Spec        hcldec.Spec
	ImpliedType cty.Type
	// Unknown is the value of a resource before it is applied, as far as the schema tells:
	// unknown attributes, the sensitive ones marked. NilVal when the provider cannot tell.
	Unknown cty.Value
	// Attributes describes the top-level attributes (not nested blocks), sorted by name, for
	// what turns a schema into another (cairn kube enable); nil when the provider cannot tell.
	Attributes []Attribute
}

// Attribute is one top-level attribute of a schema.
type Attribute struct {
	Name                                    string
	Type                                    cty.Type
	Required, Optional, Computed, Sensitive bool
}

// ConfigureRequest configures a provider instance.
type ConfigureRequest struct {
	Config cty.Value
	// URN is the dialect's own name of the provider configuration (Pulumi's provider URN),
	// "" when the dialect has none.
	URN string
}

// ConfigureResponse carries the provider's diagnostics.
type ConfigureResponse struct {
	Diagnostics diag.Diagnostics
}

// ReadDataRequest reads a data source of Resource.Type with its configuration.
type ReadDataRequest struct {
	Resource Resource
	Config   cty.Value // may hold unknowns during a preview: the provider then returns unknowns
}

// ReadDataResponse is the data source's state.
type ReadDataResponse struct {
	State       cty.Value
	Diagnostics diag.Diagnostics
}

// ImportRequest adopts the object that ID names as a resource of Resource.Type.
type ImportRequest struct {
	Resource Resource
	ID       string
}

// ImportResponse is the adopted object, read back.
type ImportResponse struct {
	ID          string
	Outputs     cty.Value
	Private     []byte
	Diagnostics diag.Diagnostics
}

// Capabilities declares optional behaviour, so the engine plans around what is missing rather
// than discovering it by type assertion.
type Capabilities struct {
	Read bool // Read can refresh a resource (custom resources cannot)
}

// Resource identifies the resource a call is about.
type Resource struct {
	StackName string
	// StackKey is where cairn keeps the stack (its tenant and name): what a provider that
	// stores per-stack rows (custom-resource requests) files them under. Empty outside a run.
	StackKey  string
	StackID   string
	Name      string // logical id
	Type      string
	Dialect   string // template.Dialect of the stack
	Region    string
	AccountID string
	// ReplaceOnChanges are property paths whose change the provider's Diff reports as a
	// replacement whatever the provider says (Pulumi's replaceOnChanges; `*` for any).
	ReplaceOnChanges []string
	// URN is the dialect's own name of the resource (Pulumi's URN, with the project, the
	// stack and the parents' types), "" when the dialect has none (template.DialectPolicy.URN).
	URN string
}

// CheckRequest asks the provider to validate inputs. Props may hold unknowns during a preview
// or a validation; the provider checks what it can.
type CheckRequest struct {
	Resource Resource
	Props    cty.Value
	// OldProps are the inputs the resource is stored with, when it exists (Pulumi's olds,
	// from which a provider keeps values it generated before); cty.NilVal for a resource to
	// create, or one checked again as a replacement's new object.
	OldProps cty.Value
}

// CheckResponse returns the inputs to use (possibly defaulted) and failures keyed by the dotted
// property path they are about.
type CheckResponse struct {
	Props    cty.Value
	Failures []CheckFailure
	Warnings []CheckFailure // shown to the user; they do not stop the deploy
}

// CheckFailure is one invalid property.
type CheckFailure struct {
	Property string // dotted path below Properties; empty for the resource as a whole
	Reason   string
}

// DiffRequest compares a resource's recorded inputs with its new ones.
type DiffRequest struct {
	Resource Resource
	ID       string
	OldProps cty.Value
	NewProps cty.Value // may hold unknowns during a preview
	// OldOutputs and Private are what the last create, update or read returned.
	OldOutputs cty.Value
	Private    []byte
}

// DiffResponse says what an update would do.
type DiffResponse struct {
	Changed     bool     // an Update (or replacement) is needed
	ChangedKeys []string // top-level properties that differ, sorted
	// Replace says the resource must be replaced; MayReplace that the provider decides during
	// Update (a custom-resource handler replaces by returning a new physical id).
	Replace    bool
	MayReplace bool
	// Planned is the outputs the change is expected to produce, unknown where not known until
	// it is applied (cty.NilVal when the provider cannot tell). ReplacePaths lists the dotted
	// attribute paths that force a replacement.
	Planned      cty.Value
	ReplacePaths []string
	// DeleteBeforeReplace says the provider requires a replacement to delete the old resource
	// before creating the new one (a Pulumi provider's answer, e.g. a unique name); it matters
	// only when Replace is set, and a template's own option may still ask for it.
	DeleteBeforeReplace bool
	// Stables lists the top-level output properties the change cannot alter, sorted: a preview
	// keeps their old values known instead of unknown.
	Stables     []string
	Diagnostics diag.Diagnostics // warnings from planning
}

// CreateRequest creates a resource.
type CreateRequest struct {
	Resource Resource
	Token    string // unique per call and stable across retries of the same call
	Props    cty.Value
	Timeout  time.Duration
}

// CreateResponse reports the new resource. When Diagnostics has errors the create failed; a
// non-empty ID then names what may have been created, which a rollback deletes.
type CreateResponse struct {
	ID          string
	Outputs     cty.Value
	Private     []byte // opaque provider data, passed back on later calls
	Diagnostics diag.Diagnostics
	// NotCreated, set only with error Diagnostics, says the provider knows that nothing was
	// created, and why (such as "the ServiceToken endpoint never accepted the Create request"):
	// the request never reached anything that could act on it. A rollback then skips the
	// Delete it would send for a failed create, and its event gives this reason.
	NotCreated string
}

// ReadRequest refreshes a resource.
type ReadRequest struct {
	Resource Resource
	ID       string
	Props    cty.Value
	Outputs  cty.Value
	Private  []byte
}

// ReadResponse returns the live resource; an empty ID means it no longer exists.
type ReadResponse struct {
	ID      string
	Props   cty.Value
	Outputs cty.Value
	Private []byte
	// PropsRead says Props are the object's inputs as the provider read them (or the stored
	// ones when it reads none, a Pulumi plugin's Read): they are stored as they are, and the
	// next plan compares the configuration with them. Otherwise Props echo the request's,
	// and an object read with drift is planned against the attributes read.
	PropsRead   bool
	Diagnostics diag.Diagnostics
}

// UpdateRequest updates a resource in place, or lets the provider replace it.
type UpdateRequest struct {
	Resource   Resource
	Token      string
	ID         string
	OldProps   cty.Value
	NewProps   cty.Value
	OldOutputs cty.Value
	Private    []byte
	Timeout    time.Duration
}

// UpdateResponse reports the updated resource. An ID different from the request's means the
// provider replaced the resource: the engine deletes the old one after the operation succeeds.
type UpdateResponse struct {
	ID          string
	Outputs     cty.Value
	Private     []byte
	Diagnostics diag.Diagnostics
}

// DeleteRequest deletes a resource.
type DeleteRequest struct {
	Resource Resource
	Token    string
	ID       string
	Props    cty.Value
	Outputs  cty.Value
	Private  []byte
	Timeout  time.Duration
}

// DeleteResponse reports a delete; Diagnostics with errors mean it failed.
type DeleteResponse struct {
	Diagnostics diag.Diagnostics
}

// ErrNotSupported is returned by a method the provider does not offer (see Capabilities).
var ErrNotSupported = errors.New("not supported by this provider")

// StateVersioner is implemented by providers whose stored state carries a schema version (the
// Terraform plugins): StateCurrent reports whether state written with private is of the
// current schema of typ, so an unchanged configuration needs no plan at all.
type StateVersioner interface {
	StateCurrent(ctx context.Context, typ string, private []byte) bool
}

// ErrUnknownType is wrapped by Schema when the provider has no resource type or data source
// of the requested name.
var ErrUnknownType = errors.New("unknown type")

// Unimplemented answers every optional method with ErrNotSupported. Embed it so that adding a
// method to Provider breaks no implementation.
type Unimplemented struct{}

func (Unimplemented) Capabilities() Capabilities { return Capabilities{} }
func (Unimplemented) Read(context.Context, ReadRequest) (ReadResponse, error) {
	return ReadResponse{}, ErrNotSupported
}
func (Unimplemented) Schema(context.Context, SchemaRequest) (Schema, error) {
	return Schema{}, ErrNotSupported
}
func (Unimplemented) Configure(context.Context, ConfigureRequest) (ConfigureResponse, error) {
	return ConfigureResponse{}, nil
}
func (Unimplemented) ReadData(context.Context, ReadDataRequest) (ReadDataResponse, error) {
	return ReadDataResponse{}, ErrNotSupported
}
func (Unimplemented) Import(context.Context, ImportRequest) (ImportResponse, error) {
	return ImportResponse{}, ErrNotSupported
}
func (Unimplemented) Close() error { return nil }

// PrivateState is implemented by providers whose stored Private bytes wrap the schema version
// a state was written with (the Terraform plugins), so that a terraform state file, which
// keeps the two apart, can be written from and read into cairn's rows.
type PrivateState interface {
	// SplitPrivate returns the schema version and the provider's own private data of stored
	// Private bytes; state stored without a version is of typ's current schema version.
	SplitPrivate(ctx context.Context, typ string, private []byte) (schemaVersion int64, own []byte, err error)
	// JoinPrivate is the stored form of a state of schemaVersion with the provider's own data.
	JoinPrivate(schemaVersion int64, own []byte) []byte
}
