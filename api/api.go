// Package api holds the public JSON wire types of cairn's HTTP API (/v1/...) and its stable
// error codes. It imports only the standard library, so clients can depend on it alone.
package api

import (
	"bytes"
	"encoding/json"
	"time"
)

// DeployRequest is the body of POST /v1/stacks/{name}/deploy and /preview.
type DeployRequest struct {
	TemplateName string `json:"templateName"` // file name, used in error locations
	Template     string `json:"template"`     // template source text
	// Files holds a Terraform-language configuration instead of Template: every file of its
	// directory by slash-separated relative path (.tf, .tf.json, .tfvars, local modules, files
	// read by file()). VarFiles names those to load as -var-file, in order; Env holds TF_VAR_*
	// values by variable name. Parameters are -var values and win over both.
	Files           map[string]string `json:"files,omitempty"`
	VarFiles        []string          `json:"varFiles,omitempty"`
	Env             map[string]string `json:"env,omitempty"`
	Parameters      map[string]string `json:"parameters,omitempty"`
	DisableRollback bool              `json:"disableRollback,omitempty"`
	Upgrade         bool              `json:"upgrade,omitempty"`        // pick the newest allowed provider versions, ignoring the lock file
	TimeoutSeconds  int               `json:"timeoutSeconds,omitempty"` // 0: no stack timeout
	// Parallelism bounds the provider calls the operation makes at once, as terraform's
	// -parallelism does; 0 means the server's default.
	Parallelism int `json:"parallelism,omitempty"`
	// Refresh reads every resource of a Terraform-language stack back through its provider
	// before planning, as terraform plan does by default; without it cairn plans against its
	// stored state (one provider call fewer per resource). See api/refresh.go.
	Refresh bool `json:"refresh,omitempty"`
	// WorkDir is the configuration's absolute directory where the client read it, as terraform
	// -chdir would run there: abspath and path.cwd start from it, and provider processes run in
	// it when it exists on the server's machine. Empty: not known.
	WorkDir string `json:"workDir,omitempty"`
	// Plan is a PreviewResponse.Plan of this very request: the deploy applies exactly its
	// steps, and is refused (409, plan_stale) when the stack or the template moved since.
	Plan json.RawMessage `json:"plan,omitempty"`
	// SavePlan asks a preview for PreviewResponse.Saved: the request as a plan file may keep it.
	SavePlan bool `json:"savePlan,omitempty"`
}

// ValidateRequest is the body of POST /v1/validate.
type ValidateRequest struct {
	TemplateName string            `json:"templateName"`
	Template     string            `json:"template"`
	Files        map[string]string `json:"files,omitempty"`
	VarFiles     []string          `json:"varFiles,omitempty"`
	Env          map[string]string `json:"env,omitempty"`
	Parameters   map[string]string `json:"parameters,omitempty"`
}

// ImportRequest is the body of POST /v1/stacks/{name}/import: adopt the existing object ID as
// the resource at Address of the template in Source (a Terraform-language configuration), as
// terraform import does.
type ImportRequest struct {
	Source  DeployRequest `json:"source"`
	Address string        `json:"address"` // e.g. cairntest_thing.a or module.m.x.y["k"]
	ID      string        `json:"id"`
}

// CancelRequest is the (optional) body of POST /v1/stacks/{name}/cancel. Without Force the
// operation is cancelled as CancelUpdateStack does: providers are told to stop and a
// CloudFormation-dialect stack rolls back. With Force it is ended at once, as `terraform
// force-unlock` drops a lock: whoever runs it is stopped, nothing is rolled back, and the
// stack's event says who forced it and that its state may not match its resources.
type CancelRequest struct {
	Force bool `json:"force,omitempty"`
	// By names who forces it in that event, such as "alice@laptop"; at most 200 characters.
	By string `json:"by,omitempty"`
}

// DeleteRequest is the (optional) body of DELETE /v1/stacks/{name}.
type DeleteRequest struct {
	TimeoutSeconds  int      `json:"timeoutSeconds,omitempty"`
	RetainResources []string `json:"retainResources,omitempty"` // logical ids to abandon instead of delete
	Parallelism     int      `json:"parallelism,omitempty"`     // as DeployRequest.Parallelism
}

// Diagnostic is a problem a user must read: where it is and what is wrong.
type Diagnostic struct {
	Severity string `json:"severity"` // "error" or "warning"
	Summary  string `json:"summary"`
	Detail   string `json:"detail,omitempty"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Path     string `json:"path,omitempty"` // e.g. Resources.Db.Properties.Size
}

// ValidateResponse answers POST /v1/validate.
type ValidateResponse struct {
	Valid       bool         `json:"valid"`
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
	Parameters  []Parameter  `json:"parameters,omitempty"`
}

// Parameter describes a declared template parameter.
type Parameter struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
	NoEcho      bool   `json:"noEcho,omitempty"`
	Value       string `json:"value,omitempty"` // "****" when NoEcho
}

// Change actions, as a CloudFormation change set names them.
const (
	ActionAdd     = "Add"
	ActionModify  = "Modify"
	ActionRemove  = "Remove"
	ActionNoop    = "None"
	ReplaceTrue   = "True"
	ReplaceFalse  = "False"
	ReplaceMaybe  = "Conditional" // the provider decides during the update
	UnknownMarker = "(known after apply)"
	// SensitiveMarker stands for a secret in a Terraform-language preview, as terraform plan
	// shows it; other dialects show "****".
	SensitiveMarker = "(sensitive value)"
	// ActionRead is a data source read during a deploy (its configuration is not known yet).
	ActionRead = "Read"
)

// Change is what a deploy would do to one resource.
type Change struct {
	LogicalID   string           `json:"logicalId"`
	PhysicalID  string           `json:"physicalId,omitempty"`
	Type        string           `json:"type"`
	Action      string           `json:"action"`
	Replacement string           `json:"replacement,omitempty"` // for Modify: True, False or Conditional
	MovedFrom   string           `json:"movedFrom,omitempty"`   // a moved block gave it this address: its former one
	Importing   string           `json:"importing,omitempty"`   // an import block adopts the object with this id first
	Details     []PropertyChange `json:"details,omitempty"`
}

// PropertyChange is one top-level property that differs. Values are masked ("****") when
// secret and UnknownMarker when not known until apply.
type PropertyChange struct {
	Name   string `json:"name"`
	Before any    `json:"before,omitempty"`
	After  any    `json:"after,omitempty"`
	// ForcesReplacement marks the attributes that make a Terraform provider replace the resource.
	ForcesReplacement bool `json:"forcesReplacement,omitempty"`
}

// PreviewResponse answers POST /v1/stacks/{name}/preview.
type PreviewResponse struct {
	Stack       string       `json:"stack"`
	Dialect     string       `json:"dialect,omitempty"` // "terraform" for a Terraform-language template
	Changes     []Change     `json:"changes"`
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
	LockFile    string       `json:"lockFile,omitempty"` // see Operation.LockFile
	// Drift is what a preview with Refresh found changed outside cairn and relevant to the
	// plan (see RefreshResponse.Drift).
	Drift []Change `json:"drift,omitempty"`
	// Parameters are the values the deploy would bind, NoEcho ones masked: for a
	// CloudFormation or ROS stack, those not given keep their values of the last deploy.
	Parameters []Parameter `json:"parameters,omitempty"`
	// Outputs is what the deploy would do to the stack's outputs (unchanged ones left out).
	Outputs []OutputChange `json:"outputs,omitempty"`
	// Plan is the whole plan, opaque to clients: DeployRequest.Plan sends it back for the
	// deploy to apply exactly these steps (cairn preview --out, cairn deploy --plan).
	Plan json.RawMessage `json:"plan,omitempty"`
	// Saved (asked by DeployRequest.SavePlan) is the request without the values of ephemeral
	// variables, which are never saved: EphemeralVars names them, for the deploy of the saved
	// plan to give again, as terraform apply PLANFILE asks for them.
	Saved         *DeployRequest `json:"saved,omitempty"`
	EphemeralVars []string       `json:"ephemeralVars,omitempty"`
}

// OutputChange is what a deploy would do to one stack output: Action is ActionAdd,
// ActionModify or ActionRemove. Values are masked when secret and UnknownMarker when not known
// until the deploy.
type OutputChange struct {
	Name   string `json:"name"`
	Action string `json:"action"`
	Before any    `json:"before,omitempty"`
	After  any    `json:"after,omitempty"`
}

// Operation is a running or finished deploy or delete.
type Operation struct {
	ID           string    `json:"id"`
	Stack        string    `json:"stack"`
	Kind         string    `json:"kind"`   // "deploy" or "delete"
	Status       string    `json:"status"` // "running", "succeeded" or "failed"
	StatusReason string    `json:"statusReason,omitempty"`
	StartedAt    time.Time `json:"startedAt"`
	EndedAt      time.Time `json:"endedAt,omitzero"`
	StackStatus  string    `json:"stackStatus,omitempty"`
	// LockFile is the provider lock file (.terraform.lock.hcl) the deploy uses; only in the
	// answer that starts a Terraform-language deploy, for the client to keep beside the files.
	LockFile string `json:"lockFile,omitempty"`
}

// Output is a stack output; Value is "****" when it carries a secret.
type Output struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Value       any    `json:"value"`
}

// UnmarshalJSON decodes an output keeping its numbers exact (json.Number): an integer above
// 2^53 would lose digits as a float64.
func (o *Output) UnmarshalJSON(b []byte) error {
	type plain Output
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode((*plain)(o))
}

// Resource is one resource of a stack.
type Resource struct {
	LogicalID    string    `json:"logicalId"`
	PhysicalID   string    `json:"physicalId,omitempty"`
	Type         string    `json:"type"`
	Status       string    `json:"status"`
	StatusReason string    `json:"statusReason,omitempty"`
	UpdatedAt    time.Time `json:"updatedAt"`
	// Attributes is a Terraform-language resource's state, secrets as SensitiveMarker.
	Attributes any `json:"attributes,omitempty"`
}

// Stack is a stack's summary (GET /v1/stacks) or, with Resources and Outputs, its
// description (GET /v1/stacks/{name}).
type Stack struct {
	Name         string      `json:"name"`
	ID           string      `json:"id"`
	Dialect      string      `json:"dialect"`
	Status       string      `json:"status"`
	StatusReason string      `json:"statusReason,omitempty"`
	Description  string      `json:"description,omitempty"`
	Operation    string      `json:"operation,omitempty"`
	CreatedAt    time.Time   `json:"createdAt"`
	UpdatedAt    time.Time   `json:"updatedAt"`
	Parameters   []Parameter `json:"parameters,omitempty"`
	Outputs      []Output    `json:"outputs,omitempty"`
	Resources    []Resource  `json:"resources,omitempty"`
}

// Event is one status change, as CloudFormation's DescribeStackEvents reports it.
type Event struct {
	Seq        int64     `json:"seq"`
	Stack      string    `json:"stack"`
	Operation  string    `json:"operation,omitempty"`
	LogicalID  string    `json:"logicalId"`
	PhysicalID string    `json:"physicalId,omitempty"`
	Type       string    `json:"type"`
	Status     string    `json:"status"`
	Reason     string    `json:"reason,omitempty"`
	Timestamp  time.Time `json:"timestamp"`
}

// Error is the body of every 4xx and 5xx answer.
type Error struct {
	Code        string       `json:"code"`
	Message     string       `json:"message"`
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Stable error codes. Clients switch on these, never on messages.
const (
	CodeInvalidRequest   = "invalid_request"   // 400: the request body or a flag is malformed
	CodeValidationFailed = "validation_failed" // 400: the template or parameters are invalid; see Diagnostics
	CodeUnauthorized     = "unauthorized"      // 401: missing or wrong bearer token
	CodeNotFound         = "not_found"         // 404: no such stack, operation or request
	CodeStackBusy        = "stack_busy"        // 409: the stack has a running operation
	CodePlanStale        = "plan_stale"        // 409: a saved plan no longer applies: the stack or template moved since
	CodeNoOperation      = "no_operation"      // 409: cancel of a stack that has no running operation
	CodeResponseRejected = "response_rejected" // 400/403/410/413: a custom-resource response was refused
	CodeInternal         = "internal"          // 500
	CodeKubeNotServed    = "kube_not_served"   // 404: the server was started without --kube-listen
	CodeForbidden        = "forbidden"         // 403: the token's tenant may not do this (only the server's own token may)
)

// Whoami is the body of GET /v1/whoami: the tenant the caller's token stands for. Admin is
// true for the server's own token (tenant "default"), which may act for every tenant where an
// API allows it (cairn's kube API: every namespace and the cluster-scoped CRDs).
type Whoami struct {
	Tenant string `json:"tenant"`
	Admin  bool   `json:"admin"`
	// Role is the caller's role in its tenant (viewer, deployer, admin) and Subject what names
	// it in the audit log.
	Role    string `json:"role,omitempty"`
	Subject string `json:"subject,omitempty"`
}

// KubeEndpoint is the body of GET /v1/kube: where cairn's Kubernetes API listens and the CA
// that signs its certificate (PEM), for a kubeconfig.
type KubeEndpoint struct {
	Server string `json:"server"`
	CA     string `json:"ca"`
}

// KubeEnableRequest is the body of POST /v1/kube/enable: offer resource types of a Terraform
// provider as Kubernetes types (CRDs) on cairn's kube API.
type KubeEnableRequest struct {
	Provider string   `json:"provider"`          // source address, e.g. hashicorp/random
	Version  string   `json:"version,omitempty"` // version constraint; "" for the newest found
	Types    []string `json:"types"`             // resource types, e.g. random_pet
}

// KubeEnableResponse lists the CRDs made (or updated), by name.
type KubeEnableResponse struct {
	Provider string   `json:"provider"`
	Version  string   `json:"version"`
	CRDs     []string `json:"crds"`
}
