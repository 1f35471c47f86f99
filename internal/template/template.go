// Package template is the dialect-neutral model of a stack that every template language parses
// into: resources with their inputs as expressions, dependencies, and per-resource options.
// Parsers live in subpackages (cfn for CloudFormation and ROS). It imports only leaves.
package template

import (
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
)

// Dialect names the template language a stack was written in. It decides request shapes
// (CloudFormation stringifies custom-resource properties, ROS does not) and failure handling
// (CloudFormation and ROS roll back).
type Dialect string

const (
	CloudFormation Dialect = "cloudformation"
	ROS            Dialect = "ros"
)

// Stack is a parsed, parameter-bound template.
type Stack struct {
	Dialect     Dialect
	Description string
	Parameters  []*Parameter // declared parameters with the values they took
	Resources   []*Resource  // in template order; resources whose Condition is false are absent
	Outputs     []*Output
}

// Resource returns the resource called name, or nil.
func (s *Stack) Resource(name string) *Resource {
	for _, r := range s.Resources {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// Parameter is a declared template parameter and the value it took. A NoEcho parameter's
// value carries the value.Sensitive mark.
type Parameter struct {
	Name        string
	Type        string
	Description string
	NoEcho      bool
	Value       cty.Value
	Range       diag.Range
}

// Policy says what happens to a resource's physical object when the resource leaves the stack
// (DeletionPolicy) or is replaced (UpdateReplacePolicy).
type Policy string

const (
	Delete   Policy = "Delete"
	Retain   Policy = "Retain"
	Snapshot Policy = "Snapshot" // treated as Delete by custom resources, which have no snapshots
)

// Resource is one declared resource.
type Resource struct {
	Name       string // logical id
	Type       string
	Properties Expr // evaluates to an object (EmptyObjectVal when none)
	// DependsOn lists every resource this one needs, explicit DependsOn and references alike,
	// sorted and without duplicates.
	DependsOn           []string
	DeletionPolicy      Policy
	UpdateReplacePolicy Policy
	Range               diag.Range // the resource's logical id
	TypeRange           diag.Range // its Type value
	// PropertyRanges locates properties in the source by dotted path below Properties
	// ("ServiceToken", "Parameters.Size"); the empty key is the Properties key itself.
	PropertyRanges map[string]diag.Range
}

// PropertyRange returns the best known source range for the property at path: the range of
// the path itself, else of its nearest ancestor, else of the resource.
func (r *Resource) PropertyRange(path string) diag.Range {
	for p := path; ; {
		if rng, ok := r.PropertyRanges[p]; ok {
			return rng
		}
		if p == "" {
			return r.Range
		}
		p = parent(p)
	}
}

func parent(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '.' {
			return path[:i]
		}
	}
	return ""
}

// Output is a declared stack output.
type Output struct {
	Name        string
	Description string
	Value       Expr
	Range       diag.Range
}

// Expr is a template value that may depend on other resources.
type Expr interface {
	// Eval computes the value in s. Where s says a referenced resource is not yet known the
	// result holds unknowns (a preview shows them as "known after apply").
	Eval(s Scope) (cty.Value, diag.Diagnostics)
}

// Scope gives an expression the resources it references.
type Scope interface {
	// Resource returns what is known of the resource called name; false if there is no such
	// resource in the stack.
	Resource(name string) (ResourceValue, bool)
}

// ResourceValue is what other resources can read of a resource: its physical id (Ref) and its
// output attributes (Fn::GetAtt). Either may be unknown during a preview.
type ResourceValue struct {
	ID      cty.Value // string, or unknown
	Outputs cty.Value // object, or unknown
}

// UnknownResource is the value of a resource that has not been applied yet.
var UnknownResource = ResourceValue{ID: cty.UnknownVal(cty.String), Outputs: cty.DynamicVal}

// Const is an expression with a fixed value.
type Const cty.Value

// Eval returns the constant.
func (c Const) Eval(Scope) (cty.Value, diag.Diagnostics) { return cty.Value(c), nil }
