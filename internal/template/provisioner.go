package template

import (
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
)

// BuiltinProvider is the source of terraform's built-in provider (terraform_data): it needs
// no required_providers entry and no plugin.
const BuiltinProvider = "terraform.io/builtin/terraform"

// ProvisionerWhen says when a provisioner runs.
type ProvisionerWhen string

const (
	WhenCreate  ProvisionerWhen = "create"  // after the object is created (or replaced), never on update
	WhenDestroy ProvisionerWhen = "destroy" // before the object is destroyed
)

// Provisioner is a provisioner block of a Terraform-language resource instance.
type Provisioner struct {
	Type     string // "local-exec", "file", "remote-exec"
	When     ProvisionerWhen
	Continue bool // on_failure = continue: a failure is reported and ignored
	Config   SelfExpr
	// Connection is its connection block laid over the resource's (an argument of its own
	// wins), to decode with provisioner.ConnectionSpec; nil when there is neither.
	Connection SelfExpr
	Range      diag.Range // the block
	TypeRange  diag.Range // its type label
}

// SelfExpr is a block that may reference `self`, the resource's own object, besides what
// the resource's other expressions see (count.index, each.key, ...).
type SelfExpr interface {
	// EvalSelf decodes the block with spec, self being the resource's state.
	EvalSelf(s Scope, self cty.Value, spec hcldec.Spec) (cty.Value, diag.Diagnostics)
}

// ProvisionersOf returns the provisioners of res that run when.
func ProvisionersOf(res *Resource, when ProvisionerWhen) []*Provisioner {
	if res == nil {
		return nil
	}
	var out []*Provisioner
	for _, p := range res.Provisioners {
		if p.When == when {
			out = append(out, p)
		}
	}
	return out
}
