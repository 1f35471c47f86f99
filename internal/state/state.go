// Package state defines durable storage for cairn: stacks, one row per resource, the journal
// of provider calls, operations with their leases, events, keys and custom-resource requests.
// Store is composed of small interfaces; backends live in subpackages (sqlite) and all pass
// the one conformance suite in statetest. It imports only leaves.
package state

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Store is everything cairn keeps. Implementations are safe for concurrent use.
type Store interface {
	Stacks
	Resources
	Journal
	Operations
	Events
	Keys
	CustomRequests
	Close() error
}

// ErrNotFound is returned when a requested row does not exist.
var ErrNotFound = errors.New("not found")

// DefaultTenant is the tenant of a single-user server, whose stack keys are plain names.
const DefaultTenant = "default"

// StackKey is the key a stack and everything of it (resources, journal, operations, events,
// custom-resource requests) is stored under: the stack's name in the default tenant,
// "TENANT/NAME" in another. Stack names never hold '/', so keys of two tenants never meet.
func StackKey(tenant, name string) string {
	if strings.Contains(name, "/") {
		// Never a stack's name: callers validate names, this keeps a miss a miss.
		return "\x00" + name
	}
	if tenant == "" || tenant == DefaultTenant {
		return name
	}
	return tenant + "/" + name
}

// SplitStackKey returns the tenant and the name of a stack key.
func SplitStackKey(key string) (tenant, name string) {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i], key[i+1:]
	}
	return DefaultTenant, key
}

// Stack is one stack's row. Its key is StackKey(Tenant, Name).
type Stack struct {
	Tenant       string // "" is DefaultTenant
	Name         string
	ID           string // StackId handed to providers: an ARN for CloudFormation, a UUID for ROS
	Dialect      string
	Status       string // CloudFormation stack status, e.g. CREATE_COMPLETE
	StatusReason string
	Description  string
	Parameters   []byte // JSON, as value.Marshal wrote it (NoEcho values keep their mark)
	Outputs      []byte // JSON list of api.Output, already masked
	// Template is the source of the last deploy that started (JSON of api.DeployRequest): a
	// Terraform-language stack needs its provider configurations to delete its resources.
	Template []byte
	// Providers records, for a Terraform-language stack, each provider configuration's version
	// and configuration digest as of the last deploy that succeeded (JSON, engine-defined):
	// resources are skipped as unchanged only under the same ones.
	Providers []byte
	// TFState is a Terraform-language stack's terraform state identity: the lineage of a
	// pushed state and what its serial was (JSON, engine-defined). Empty until a push.
	TFState   []byte
	Operation string // id of the running operation, or "": derived by the store, ignored by PutStack
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Stacks stores stack rows. Every method but PutStack addresses a stack by its key (StackKey).
type Stacks interface {
	PutStack(ctx context.Context, s Stack) error // insert or replace by key
	GetStack(ctx context.Context, key string) (Stack, error)
	// StackStatus is the stack's Status, or ErrNotFound: a check that the stack exists at a
	// cost that does not grow with its template.
	StackStatus(ctx context.Context, key string) (string, error)
	ListStacks(ctx context.Context, tenant string) ([]Stack, error) // the tenant's stacks, sorted by Name
	// DeleteStack removes the stack with its resources, journal, operations and events.
	DeleteStack(ctx context.Context, key string) error
}

// Resource is one resource's row.
type Resource struct {
	Stack        string // the stack's key
	Name         string // logical id
	Type         string
	ID           string // physical id
	Status       string // CloudFormation resource status, e.g. CREATE_COMPLETE
	StatusReason string
	Props        []byte // inputs as last applied, value.Marshal JSON
	Outputs      []byte // outputs, value.Marshal JSON
	Deps         []string
	// DeletionPolicy is the template's policy for the resource ("Delete", "Retain"), kept so a
	// resource removed from the template is deleted or retained as it said.
	DeletionPolicy string
	// Protect says the resource refuses to be deleted or replaced (Pulumi's protect), kept so
	// that it still refuses once removed from the template, until a deploy unprotects it.
	Protect bool
	// ProtectUnknown says the row was written before cairn kept the flag: whether the
	// resource was protected is the template's word until a deploy stores the flag.
	ProtectUnknown bool
	// Private is opaque provider data returned with the outputs and passed back on the next
	// call (Terraform providers' private state).
	Private []byte
	// Provider is the provider configuration that manages the resource (Terraform language),
	// kept so a resource removed from the template is deleted by the provider that made it.
	Provider  string
	UpdatedAt time.Time
}

// Resources stores resource rows. Writes that settle a provider call go through
// Journal.Append so that the journal and the rows never disagree.
type Resources interface {
	ListResources(ctx context.Context, stack string) ([]Resource, error) // sorted by Name
	GetResource(ctx context.Context, stack, name string) (Resource, error)
}

// Journal phases.
const (
	Begin = "begin"
	End   = "end"
)

// JournalEntry records one side of one provider call. "begin" is written before the provider
// is called and "end" after it answered, so after a crash every call that may have happened is
// known.
type JournalEntry struct {
	Seq       int64 // assigned by Append
	Operation string
	Stack     string
	Step      string // the step's key within the operation, e.g. "create/Db"
	Phase     string // Begin or End
	Token     string // the provider call's token (custom resources: the RequestId)
	Failed    bool   // End only: the call failed
	Detail    []byte // JSON the engine needs to resume (End: the call's result)
	At        time.Time
	// Fence, when not empty, is the engine that must hold the entry's operation: Append then
	// writes nothing and returns an error wrapping ErrFenced unless, in its transaction, the
	// operation is Running and its Owner is Fence. It keeps an engine that lost its operation
	// (finished by a resume, taken over by another server) from writing rows. Not stored.
	Fence string
}

// ErrFenced is returned (wrapped) by a fenced Append whose operation is no longer running or
// is held by another engine.
var ErrFenced = errors.New("the operation is no longer running under this engine")

// Write is a row change settled by a journal entry: Put replaces or inserts a resource row,
// Delete (a logical id) removes one, Stack replaces the entry's stack row (its key must be
// the entry's Stack) as PutStack does. A Write sets exactly one of them.
type Write struct {
	Put    *Resource
	Delete string
	Stack  *Stack
}

// Journal appends entries. Append writes the entry and its resource writes in one transaction.
type Journal interface {
	Append(ctx context.Context, e JournalEntry, writes ...Write) (seq int64, err error)
	ListJournal(ctx context.Context, operation string) ([]JournalEntry, error) // by Seq
}

// Operation statuses.
const (
	Running   = "running"
	Succeeded = "succeeded"
	Failed    = "failed"
)

// Operation is a deploy or delete of one stack. Request holds what is needed to resume it.
type Operation struct {
	ID           string
	Stack        string // the stack's key: its tenant owns the operation
	Kind         string // "deploy" or "delete"
	Status       string // Running, Succeeded or Failed
	StatusReason string
	Request      []byte // JSON of the engine's request, to resume after a restart
	Owner        string // server instance holding the lease
	LeaseExpires time.Time
	StartedAt    time.Time
	EndedAt      time.Time
}

// BusyError says a stack already has a running operation.
type BusyError struct {
	Stack     string
	Owner     string // the engine holding the operation's lease
	Operation string
	Kind      string
	Since     time.Time
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("stack %s is busy with operation %s (%s) since %s", e.Stack, e.Operation, e.Kind, e.Since.UTC().Format(time.RFC3339))
}

// Operations stores operations and the one-operation-per-stack lease.
type Operations interface {
	// StartOperation inserts op as Running and sets it as its stack's operation, unless the stack
	// already has a Running operation: then it returns a *BusyError naming it.
	StartOperation(ctx context.Context, op Operation) error
	// ClaimOperation makes owner the holder of a Running operation until leaseExpires. It
	// succeeds when owner already holds it or the lease has expired (by the store's clock), and
	// otherwise returns a *BusyError; a finished or unknown operation is another error.
	ClaimOperation(ctx context.Context, id, owner string, leaseExpires time.Time) error
	// TakeOverOperation makes owner the holder of a Running operation whose holder is prev, a
	// holder known to be dead, whatever its lease says. It returns a *BusyError when the
	// operation is held by someone else (another engine took it over first).
	TakeOverOperation(ctx context.Context, id, prev, owner string, leaseExpires time.Time) error
	// FinishOperation marks op Succeeded or Failed and clears its stack's operation.
	FinishOperation(ctx context.Context, id, status, reason string, at time.Time) error
	GetOperation(ctx context.Context, id string) (Operation, error)
	// WatchOperation returns operation id without its Request, and its stack's Status ("" once
	// the stack row is gone): what following an operation reads many times a second, at a cost
	// that does not grow with the stack's template.
	WatchOperation(ctx context.Context, id string) (op Operation, stackStatus string, err error)
	ListRunningOperations(ctx context.Context) ([]Operation, error)
}

// Event is one status change of a stack or resource, as CloudFormation reports them.
type Event struct {
	Seq        int64 // assigned by AppendEvent, increasing across all stacks
	Stack      string
	Operation  string
	LogicalID  string // the stack's name for stack events
	PhysicalID string
	Type       string // resource type, "AWS::CloudFormation::Stack" for stack events
	Status     string
	Reason     string
	At         time.Time
}

// Events is the event log.
type Events interface {
	AppendEvent(ctx context.Context, e Event) (seq int64, err error)
	// ListEvents returns the stack's events with Seq > after, oldest first, at most limit (0: all).
	ListEvents(ctx context.Context, stack string, after int64, limit int) ([]Event, error)
	// LastEventSeq is the Seq of the stack's newest event, 0 when it has none.
	LastEventSeq(ctx context.Context, stack string) (int64, error)
}

// Keys keeps named secrets such as the response-URL signing key.
type Keys interface {
	// Key returns the key called name, creating it with gen when absent. Concurrent callers
	// all get the one stored key.
	Key(ctx context.Context, name string, gen func() ([]byte, error)) ([]byte, error)
}

// CustomRequest is a custom-resource request and, once it arrived, its response.
type CustomRequest struct {
	ID          string // RequestId
	Stack       string
	LogicalID   string
	Body        []byte // the request object as sent
	Expires     time.Time
	Sent        bool
	Response    []byte // first valid response body, nil until one arrived
	RespondedAt time.Time
}

// CustomRequests stores custom-resource requests and their responses.
type CustomRequests interface {
	// PutCustomRequest inserts r unless a request with its ID exists, and returns the stored row
	// and whether it was inserted.
	PutCustomRequest(ctx context.Context, r CustomRequest) (stored CustomRequest, inserted bool, err error)
	MarkCustomRequestSent(ctx context.Context, id string) error
	GetCustomRequest(ctx context.Context, id string) (CustomRequest, error)
	// SaveCustomResponse stores body as the response of request id unless one is stored
	// already; first reports whether this one was stored.
	SaveCustomResponse(ctx context.Context, id string, body []byte, at time.Time) (first bool, err error)
}
