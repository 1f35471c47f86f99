// Package template is the dialect-neutral model of a stack that every template language parses
// into: resources with their inputs as expressions, dependencies, and per-resource options.
// Parsers live in subpackages (cfn for CloudFormation and ROS, tflang for the Terraform
// language); each hands the engine its dialect's Policy. It imports only leaves.
package template

import (
	"context"
	"sync"

	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
)

// Dialect names the template language a stack was written in, as stored with the stack. The
// engine goes by the dialect's Policy, not its name; providers see the name (CloudFormation
// stringifies custom-resource properties, ROS does not).
type Dialect string

const (
	CloudFormation Dialect = "cloudformation"
	ROS            Dialect = "ros"
	Terraform      Dialect = "terraform"  // the Terraform language; failures stop, nothing rolls back
	PulumiYAML     Dialect = "pulumiyaml" // Pulumi YAML programs, with Pulumi provider plugins
)

// Stack is a parsed, parameter-bound template.
type Stack struct {
	Dialect     Dialect
	Policy      DialectPolicy // how the engine runs stacks of the dialect (policy.go)
	Description string
	Parameters  []*Parameter // declared parameters with the values they took
	Resources   []*Resource  // in template order; resources whose Condition is false are absent
	Outputs     []*Output

	// The Terraform language only: the providers the template requires and the provider
	// configurations its resources use (a default configuration for every required provider
	// that has no provider block).
	Requirements []*ProviderRequirement
	Providers    []*ProviderConfig
	// Moves and Removals are the moved and removed blocks of every module instance.
	Moves    []*Move
	Removals []*Removal
	// Imports are the root module's import blocks, one per target instance (imports.go).
	Imports []*Import
	// Checks are the check blocks of every module instance: assertions evaluated after the
	// resources are applied, whose failures are warnings (conditions.go).
	Checks []*Check
	// Functions are the provider-defined functions the configuration calls (functions.go).
	Functions *ProviderFunctions
	// Ephemerals are the instances of ephemeral resource blocks (Mode Ephemeral): opened for
	// one run when their values are needed, never stored, and not part of Resources.
	Ephemerals []*Resource

	indexOnce sync.Once
	index     map[string]*Resource
}

// ProviderRequirement is one entry of required_providers, merged across modules.
type ProviderRequirement struct {
	Name     string // local name, e.g. "time"
	Source   string // fully qualified: "registry.terraform.io/hashicorp/time"
	Versions string // version constraints, comma-separated; "" for any
	Range    diag.Range
	// Local are plugin builds the project itself names (Pulumi.yaml's plugins:), searched
	// before any other place.
	Local []LocalPlugin
}

// LocalPlugin is a plugin binary's directory (absolute) and the version it serves ("" for any).
type LocalPlugin struct{ Dir, Version string }

// ProviderConfig is one provider block (or the implied empty one).
type ProviderConfig struct {
	Addr      string // "provider.time" or "provider.time.west": its node in the dependency graph
	Name      string // local name, matching a ProviderRequirement
	Alias     string
	Config    Expr // usually a BodyExpr, decoded with the provider's own schema
	DependsOn []string
	Range     diag.Range
	// EnvVarMappings are Pulumi's envVarMappings: the provider's process sees cairn's
	// environment variable KEY (when set) under the name VALUE too.
	EnvVarMappings map[string]string
}

// Provider returns the provider configuration with address addr, or nil.
func (s *Stack) Provider(addr string) *ProviderConfig {
	for _, p := range s.Providers {
		if p.Addr == addr {
			return p
		}
	}
	return nil
}

// Requirement returns the requirement for local name, or nil.
func (s *Stack) Requirement(name string) *ProviderRequirement {
	for _, r := range s.Requirements {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// Resource returns the resource called name, or nil. Resources must not change after the
// first call: it indexes them.
func (s *Stack) Resource(name string) *Resource {
	s.indexOnce.Do(func() {
		s.index = make(map[string]*Resource, len(s.Resources))
		for _, r := range s.Resources {
			s.index[r.Name] = r
		}
	})
	return s.index[name]
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
	// Ephemeral says the value must not be stored (a Terraform `variable { ephemeral = true }`).
	Ephemeral bool
	// Text is the text Value was bound from (given, kept from the last deploy, or the
	// Default), which a dialect whose policy RemembersParameters keeps for the next deploy.
	// HasText is false when there is none (a validation without a value).
	Text    string
	HasText bool
}

// Policy says what happens to a resource's physical object when the resource leaves the stack
// (DeletionPolicy) or is replaced (UpdateReplacePolicy).
type Policy string

const (
	Delete   Policy = "Delete"
	Retain   Policy = "Retain"
	Snapshot Policy = "Snapshot" // treated as Delete by custom resources, which have no snapshots
)

// Mode says whether a resource is managed or read (a Terraform data source).
type Mode string

const (
	Managed   Mode = ""
	Data      Mode = "data"
	Ephemeral Mode = "ephemeral" // a Terraform ephemeral resource: in Stack.Ephemerals only
)

// Ephemeral returns the ephemeral resource instance called name, or nil.
func (s *Stack) Ephemeral(name string) *Resource {
	for _, r := range s.Ephemerals {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// Resource is one declared resource (one instance, for the Terraform language: count and
// for_each are expanded by the parser).
type Resource struct {
	Name       string // logical id; for the Terraform language the instance address, e.g. `module.m.time_static.t["a"]`
	Type       string
	Properties Expr // evaluates to an object (EmptyObjectVal when none)
	Mode       Mode
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

	// The Terraform language only.
	Provider            string // address of the ProviderConfig serving it
	CreateBeforeDestroy bool
	PreventDestroy      bool
	IgnoreChanges       []cty.Path // attributes whose changes are ignored; IgnoreAllChanges for `all`
	IgnoreAllChanges    bool
	ReplaceTriggeredBy  []string // resource addresses whose replacement or update replaces this one

	// Preconditions are checked before the resource is planned or applied, Postconditions
	// after it is applied or read, with self its new value (conditions.go).
	Preconditions  []Condition
	Postconditions []Condition
	// Check names the check block a data source is scoped to ("check.name"): its failures are
	// warnings, as terraform reports them.
	Check string
	// Provisioners are its provisioner blocks, in order (provisioner.go).
	Provisioners []*Provisioner

	// Resource options of Pulumi programs (options.go).
	Options
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
	// Sensitive says the output was declared sensitive (the Terraform language): only then may
	// its value hold secrets.
	Sensitive bool
	// Preconditions are checked before the output's value is (the Terraform language).
	Preconditions []Condition
}

// Expr is a template value that may depend on other resources.
type Expr interface {
	// Eval computes the value in s. Where s says a referenced resource is not yet known the
	// result holds unknowns (a preview shows them as "known after apply").
	Eval(s Scope) (cty.Value, diag.Diagnostics)
}

// BodyExpr is a configuration block that only the provider's schema can decode (blocks of the
// Terraform language). The engine asks the serving provider for the schema and calls
// EvalSpec; Eval, without one, decodes attributes only.
type BodyExpr interface {
	Expr
	EvalSpec(s Scope, spec hcldec.Spec) (cty.Value, diag.Diagnostics)
}

// Scope gives an expression the resources it references.
type Scope interface {
	// Resource returns what is known of the resource called name; false if there is no such
	// resource in the stack.
	Resource(name string) (ResourceValue, bool)
	// Context is the context of the request or operation evaluating: its budget (see
	// internal/budget) bounds the evaluation, and its end stops it.
	Context() context.Context
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
