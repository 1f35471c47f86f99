package template

import (
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
)

// Condition is a custom condition of the Terraform language: a resource's precondition or
// postcondition, an output's precondition, or a check block's assertion.
type Condition interface {
	// Check evaluates the condition in s; self is the resource's own value for a
	// postcondition, cty.NilVal otherwise. It returns nothing when the condition holds or is
	// not known yet (it is checked again once it is), the failure as a diagnostic at the
	// condition (an error, or a warning for a check block's assertion), or the errors of its
	// evaluation.
	Check(s Scope, self cty.Value) diag.Diagnostics
}

// Check is a check block: assertions about the applied stack that warn, never fail.
type Check struct {
	Name    string // "check.name", prefixed with its module instance's address
	Asserts []Condition
	Range   diag.Range
}

// CheckAll evaluates conditions in s and returns their diagnostics together.
func CheckAll(conds []Condition, s Scope, self cty.Value) diag.Diagnostics {
	var out diag.Diagnostics
	for _, c := range conds {
		out = out.Append(c.Check(s, self))
	}
	return out
}
