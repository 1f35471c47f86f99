package template

import "fmt"

// DialectPolicy is what a dialect tells the engine about running its stacks. The engine asks the
// policy and never compares dialect names: a new dialect is a parser that sets its policy on
// the Stacks it makes (Stack.Policy). A policy is a value; its func fields are never nil in
// a dialect's policy.
type DialectPolicy struct {
	// Dialect is the name a stack of this dialect is stored under (state.Stack.Dialect): how a
	// stored stack finds its policy again.
	Dialect Dialect
	// Name names the dialect in messages: "CloudFormation", "ROS", "Terraform-language".
	Name string
	// StackType is the type the stack's own events carry.
	StackType string
	// FromFiles says the template is a directory of files (api.DeployRequest.Files), not one
	// document; a stack's template cannot change from one to the other.
	FromFiles bool

	// RollsBack says a failed create or update rolls back to where the stack was
	// (CloudFormation and ROS). Otherwise the stack stops where it failed and keeps what was
	// applied, with the outputs of what was applied (the Terraform language).
	RollsBack bool
	// PlansReplacements says the engine replaces a resource itself when its diff or its
	// configuration asks for it (destroy first or create first, tainted objects, objects a
	// replacement upstream destroyed), a failed diff fails the step, and a new id from an
	// update is no replacement. Otherwise a provider's update replaces an object by returning
	// a new physical id and the old one is deleted in the cleanup phase (CloudFormation).
	PlansReplacements bool
	// UpdatesFailedCreates says an object a failed create left behind is updated on the next
	// deploy, even with no difference, and replaced only when its diff asks (Pulumi's init
	// errors). Otherwise, with PlansReplacements, it is tainted and replaced (terraform).
	UpdatesFailedCreates bool
	// RechecksReplacements says a resource the engine replaces has its inputs checked again
	// as a new object's (no old inputs) before the replacement is created: Pulumi recomputes
	// the defaults the first check carried over from the old object.
	RechecksReplacements bool
	// ChecksInRun says the provider checks a resource only when the run reaches it, as
	// `pulumi up` does: loading a deploy or a preview evaluates every resource but sends no
	// Check, and a refusal fails that resource's step (a validation still checks them all).
	// Otherwise a deploy checks every resource before anything is applied.
	ChecksInRun bool
	// RefreshKeepsOutputs says a refresh reads the resources only: the stack's outputs stay
	// those of the last deploy until the next one (`pulumi refresh` does not run the program).
	// Otherwise a refresh evaluates them again on what it read (terraform apply -refresh-only).
	RefreshKeepsOutputs bool
	// OptionalIDs says a provider may answer without a physical id: a create then gets an id
	// of cairn's own and an update keeps the one it had.
	OptionalIDs bool
	// BlindResumedCreates says a create repeated after a restart cannot be told from a new
	// one by the provider, so the repeat says what may exist beside the state. (A custom
	// resource's handler sees the same RequestId again.)
	BlindResumedCreates bool
	// SkipsUnchanged says a resource whose configuration and provider are the ones its last
	// successful apply stored is neither checked nor planned again (--upgrade checks all).
	SkipsUnchanged bool
	// ProviderPlugins says providers are plugins resolved from the template's requirements
	// and configured from its provider blocks: the stack records their fingerprints, and
	// deleting it needs the template of its last deploy.
	ProviderPlugins bool
	// ParseUsesStackID says the parse depends on the stack's id (AWS::StackId), so a
	// template parsed before a new stack had its id must be parsed again.
	ParseUsesStackID bool
	// ChecksOutputs says outputs are evaluated when the template is loaded and before they
	// are stored, and one holding a secret must be declared sensitive (terraform's rule).
	ChecksOutputs bool
	// RemembersParameters says a redeploy keeps the value a declared parameter had when it
	// is not given, as `aws cloudformation deploy` does (template.Parameter.Text, stored
	// sealed with the stack's request); otherwise every deploy binds its values anew, as
	// terraform's -var does.
	RemembersParameters bool
	// Importable says existing objects can be adopted by address (import); StateFiles that
	// the stack has a terraform state (state pull and push); ShowsAttributes that a described
	// resource shows its stored attributes. (Refresh is not the dialect's to say: every
	// resource whose provider can read is read back, in any dialect.)
	Importable, StateFiles, ShowsAttributes bool
	// StateFormat is the dialect's own state file format when it is not a terraform state
	// (StateFiles): nil when the dialect has none.
	StateFormat StateFormat
	// Protection is set when a resource's PreventDestroy is kept with it (Pulumi's protect);
	// nil when only the template holds it (terraform's prevent_destroy: a resource removed
	// from the configuration is deleted).
	Protection *Protection

	// Paths says where a resource is in diagnostics.
	Paths func(r *Resource) ResourcePaths
	// URN, when set, is the dialect's own name of a resource (by name and type) or of a
	// provider configuration (by address, typ ""), sent to providers with their calls
	// (Pulumi's URN: project, stack, the parents' types).
	URN func(name, typ string) string
	// StackID makes the id of a new stack from the region, account, stack name and a fresh
	// unique id.
	StackID func(region, account, name, unique string) string
}

// DeposedMark joins a resource's name and an old object's id in the name of the row that
// keeps an old copy awaiting deletion (engine/deposed.go): a dialect refuses resource names
// that hold it.
const DeposedMark = "~deposed-"

// Protection is a protect flag kept with each resource, as Pulumi keeps it: a protected
// resource removed from the template, or in a stack being deleted, refuses its deletion
// before anything is deleted; a replacement is refused only when the resource was protected
// and still is (unprotecting and replacing in one deploy is allowed); a deploy that changes
// only the flag stores it.
type Protection struct {
	// Refusal is the message refusing to delete (replace false) or replace the protected
	// resource called name.
	Refusal func(name string, replace bool) string
}

// ResourcePaths are the paths of a resource, of its type and of its properties in
// diagnostics.
type ResourcePaths struct {
	Resource, Type, Properties string
}

// StackARN is a CloudFormation stack id.
func StackARN(region, account, name, unique string) string {
	return fmt.Sprintf("arn:aws:cloudformation:%s:%s:stack/%s/%s", region, account, name, unique)
}
