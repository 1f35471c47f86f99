// Package plan decides what a deploy does to each resource of a stack. Given what is known of a
// resource — whether the stack has an object for it, how that object's last step ended, and
// the provider's answer to Diff — Decide returns its step: create, update, replace (and in
// which order), read, same. Preview shows the steps; deploy executes them, deciding each
// resource again with the values known by then (as terraform apply plans each resource
// again) and holding a saved plan to what it promised (Allows).
//
// The package is pure: no provider calls, no storage. A Plan is plain data and serialises to
// JSON, which is what `cairn preview --out` saves and `cairn deploy --plan` sends back.
package plan

import "fmt"

// Action is what a step does to a resource.
type Action string

const (
	Create  Action = "create"
	Update  Action = "update"
	Replace Action = "replace"
	Delete  Action = "delete"
	Read    Action = "read"   // a data source, read during the deploy
	Import  Action = "import" // an import block adopts an existing object, which then needs nothing else
	Same    Action = "same"
	Forget  Action = "forget" // a removed block drops the resource from state, leaving the object
)

// Order is how a replacement proceeds.
type Order string

const (
	// DeleteFirst destroys the old object before creating the new one (terraform's default).
	DeleteFirst Order = "delete-first"
	// CreateFirst creates the new object first and deletes the old one when the deploy is
	// done (create_before_destroy; CloudFormation's way).
	CreateFirst Order = "create-first"
)

// Answer is what the provider's Diff said about a resource.
type Answer struct {
	Changed    bool // some property differs
	Replace    bool // the change needs a new object
	MayReplace bool // the change may need one, depending on values not known yet
	// DeleteBeforeReplace: the provider asks that a replacement delete the old object first
	// (a Pulumi provider's answer); it counts where the template left the order to it.
	DeleteBeforeReplace bool
}

// Facts is what is known of one resource when its step is decided.
type Facts struct {
	Data      bool    // a data source: it is read, never stored
	Exists    bool    // the stack holds an object for it that the deploy acts on
	Tainted   bool    // its create failed after making an object: it is replaced
	Failed    bool    // its last update failed: it is updated again, even with no difference
	Unchanged bool    // applied from this very configuration and provider: no Diff was needed
	Diff      *Answer // the provider's answer; nil when Diff was not asked
	Triggered bool    // something named in replace_triggered_by changed

	// PlansReplacements: the engine replaces objects itself, in the order Decide gives
	// (the Terraform language). Otherwise a replacement is the provider's Update returning a
	// new id (CloudFormation), and Decide only reports that it will (or may) happen.
	PlansReplacements   bool
	CreateBeforeDestroy bool
	// ProviderOrdersReplace: the template did not choose the order, so the provider's
	// Diff.DeleteBeforeReplace turns the default create-first into delete-first.
	ProviderOrdersReplace bool
	PreventDestroy        bool
	Name                  string // for the prevent_destroy message
}

// Step is what happens to one resource.
type Step struct {
	Resource string `json:"resource"`
	Type     string `json:"type,omitempty"`
	Action   Action `json:"action"`
	Order    Order  `json:"order,omitempty"` // for Replace
	// Replacement tells, for an Update the provider carries out, whether it will create a new
	// object: "True", "Conditional" (depends on values not known yet) or "" (it will not).
	Replacement string `json:"replacement,omitempty"`
	PhysicalID  string `json:"physicalId,omitempty"`
	Importing   string `json:"importing,omitempty"` // an import block adopts this id first
	MovedFrom   string `json:"movedFrom,omitempty"`
	// DestroyFirst lists, for a delete-first replacement, the resources downstream of it that
	// are replaced delete-first too and so are destroyed before it, dependents first.
	DestroyFirst []string `json:"destroyFirst,omitempty"`
}

// PreventDestroyError is what Decide returns when a replacement would destroy a resource
// whose lifecycle forbids it.
type PreventDestroyError struct{ Name string }

func (e *PreventDestroyError) Error() string {
	return fmt.Sprintf("Instance cannot be destroyed: resource %s has lifecycle.prevent_destroy set, but the plan calls for it to be destroyed. "+
		"To avoid this error and continue with the plan, either disable lifecycle.prevent_destroy or reduce the scope of the plan.", e.Name)
}

// NeedsDiff reports whether Decide needs the provider's Diff for an existing, untainted
// resource: unless it is unchanged, its last update went through and no trigger fired.
func (f Facts) NeedsDiff() bool { return !f.Unchanged || f.Failed || f.Triggered }

// Decide returns the step for a resource. It is the one place that decides.
func Decide(f Facts) (Step, error) {
	switch {
	case f.Data:
		return Step{Action: Read}, nil
	case !f.Exists:
		return Step{Action: Create}, nil
	case f.Tainted:
		return replace(f)
	case !f.NeedsDiff():
		return Step{Action: Same}, nil
	case f.Diff == nil:
		return Step{}, fmt.Errorf("plan: %s has no diff to decide from", f.Name)
	}
	if f.PlansReplacements && (f.Triggered || f.Diff.Replace) {
		return replace(f)
	}
	if !f.Diff.Changed && !f.Failed {
		return Step{Action: Same}, nil
	}
	s := Step{Action: Update}
	switch {
	case f.Diff.Replace:
		s.Replacement = "True"
	case f.Diff.MayReplace:
		s.Replacement = "Conditional"
	}
	return s, nil
}

func replace(f Facts) (Step, error) {
	if f.PreventDestroy {
		return Step{}, &PreventDestroyError{Name: f.Name}
	}
	if f.CreateBeforeDestroy && !(f.ProviderOrdersReplace && f.Diff != nil && f.Diff.DeleteBeforeReplace) {
		return Step{Action: Replace, Order: CreateFirst}, nil
	}
	return Step{Action: Replace, Order: DeleteFirst}, nil
}

// Changes reports whether the step changes the resource's object (so that its dependents see
// new values, and replace_triggered_by fires).
func (s Step) Changes() bool {
	switch s.Action {
	case Create, Update, Replace:
		return true
	}
	return false
}
