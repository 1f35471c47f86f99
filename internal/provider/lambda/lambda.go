// Package lambda serves the function resources of CloudFormation and ROS templates as cairn
// functions owned by their stack: AWS::Lambda::Function (inline Code.ZipFile) and
// ALIYUN::FC::Function (inline Code.SourceCode) with ALIYUN::FC::Service, so that a custom
// resource's `ServiceToken: !GetAtt Fn.Arn` reaches a function cairn runs. Inline code gets
// cairn's own cfn-response (Node) and cfnresponse (Python) modules, as AWS provides its modules
// to ZipFile code. It also records IAM and RAM roles and policies as no-ops, when the operator
// allows it (iam.go).
//
// It imports provider and value only; the function manager is reached through Functions, which
// internal/app implements. docs/custom-resources.md is the user's guide.
package lambda

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/value"
)

// Functions creates, replaces and deletes the functions of the caller's tenant (ctx).
type Functions interface {
	CreateFunction(ctx context.Context, f Function) error
	// UpdateFunction replaces function f.Name; an error wrapping ErrNotFound when it is gone.
	UpdateFunction(ctx context.Context, f Function) error
	// DeleteFunction deletes function name; an error wrapping ErrNotFound when it is gone.
	DeleteFunction(ctx context.Context, name string) error
}

// ErrNotFound is what Functions wraps for a function that does not exist; ErrExists for a
// name that is taken.
var (
	ErrNotFound = errors.New("no such function")
	ErrExists   = errors.New("function exists")
)

// Function is a function as the template defines it.
type Function struct {
	Name     string
	Runtime  string // nodejs or python
	Handler  string
	Code     []byte // a zip archive of the code directory
	Timeout  time.Duration
	MemoryMB int
	Env      map[string]string
}

// Provider serves the function types.
type Provider struct {
	provider.Unimplemented
	fns Functions
}

var _ provider.Provider = (*Provider)(nil)

// New returns a provider that keeps functions in fns.
func New(fns Functions) *Provider { return &Provider{fns: fns} }

// Types are the resource types the provider serves.
var Types = []string{awsFunction.name, fcFunction.name, fcService}

// fcService is Function Compute's service: a namespace of functions, recorded only.
const fcService = "ALIYUN::FC::Service"

func typeOf(name string) (fnType, bool) {
	switch name {
	case awsFunction.name:
		return awsFunction, true
	case fcFunction.name:
		return fcFunction, true
	}
	return fnType{}, false
}

// Check validates the properties, and marks the environment's values secret so that the
// stack's state keeps them sealed and no event or description shows them.
func (p *Provider) Check(_ context.Context, req provider.CheckRequest) (provider.CheckResponse, error) {
	resp := provider.CheckResponse{Props: req.Props}
	if req.Resource.Type == fcService {
		if name, ok := stringProp(req.Props, "ServiceName"); !ok || name == "" {
			resp.Failures = append(resp.Failures, provider.CheckFailure{Property: "ServiceName", Reason: "ServiceName is required"})
		}
		return resp, nil
	}
	t, ok := typeOf(req.Resource.Type)
	if !ok {
		return resp, fmt.Errorf("resource type %s is not served by the function provider", req.Resource.Type)
	}
	_, _, resp.Failures, resp.Warnings = t.decode(req.Props)
	resp.Props = secretEnv(req.Props, t.env)
	return resp, nil
}

// secretEnv marks the value at path secret.
func secretEnv(props cty.Value, path []string) cty.Value {
	if props == cty.NilVal || props.IsNull() || !props.IsKnown() {
		return props
	}
	out, err := cty.Transform(props, func(at cty.Path, v cty.Value) (cty.Value, error) {
		if names(at, path) && !v.IsNull() {
			return value.Secret(v), nil
		}
		return v, nil
	})
	if err != nil {
		return props
	}
	return out
}

// names reports whether at is path, by attribute names or string map keys.
func names(at cty.Path, path []string) bool {
	if len(at) != len(path) {
		return false
	}
	for i, step := range at {
		switch s := step.(type) {
		case cty.GetAttrStep:
			if s.Name != path[i] {
				return false
			}
		case cty.IndexStep:
			if s.Key.Type() != cty.String || s.Key.AsString() != path[i] {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// Diff: any change is an update; a new FunctionName replaces the function (Update returns the
// new name as the physical id).
func (p *Provider) Diff(_ context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
	oldProps, _ := req.OldProps.UnmarkDeep()
	newProps, _ := req.NewProps.UnmarkDeep()
	if newProps == cty.NilVal || !newProps.IsWhollyKnown() {
		return provider.DiffResponse{Changed: true, MayReplace: true}, nil
	}
	keys := map[string]bool{}
	for _, k := range append(value.Keys(oldProps), value.Keys(newProps)...) {
		keys[k] = true
	}
	var changed []string
	for k := range keys {
		ov, _ := value.Get(oldProps, k)
		nv, _ := value.Get(newProps, k)
		if !same(ov, nv) {
			changed = append(changed, k)
		}
	}
	sort.Strings(changed)
	resp := provider.DiffResponse{Changed: len(changed) > 0, ChangedKeys: changed}
	for _, k := range changed {
		if k == "FunctionName" || k == "ServiceName" {
			resp.MayReplace = true
		}
	}
	return resp, nil
}

func same(a, b cty.Value) bool {
	if a == cty.NilVal || a.IsNull() {
		return b == cty.NilVal || b.IsNull()
	}
	if b == cty.NilVal || b.IsNull() {
		return false
	}
	return a.Equals(b).True()
}

// Create makes the function, named by the template or after the stack and logical id.
func (p *Provider) Create(ctx context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
	if req.Resource.Type == fcService {
		name, _ := stringProp(req.Props, "ServiceName")
		return provider.CreateResponse{ID: name, Outputs: serviceOutputs(req.Resource, name)}, nil
	}
	t, f, diags := p.function(req.Resource, req.Props)
	if diags.HasErrors() {
		return provider.CreateResponse{Diagnostics: diags, NotCreated: "its properties are invalid"}, nil
	}
	if f.Name == "" {
		f.Name = generatedName(req.Resource, req.Token)
	}
	if err := p.fns.CreateFunction(ctx, f); err != nil {
		if errors.Is(err, ErrExists) {
			return provider.CreateResponse{NotCreated: "the name is taken", Diagnostics: diag.Diagnostics{{Severity: diag.Error,
				Summary: fmt.Sprintf("A function named %s exists already", f.Name),
				Detail:  "function names are unique in a tenant: choose another " + t.nameProp + " or delete that function"}}}, nil
		}
		return provider.CreateResponse{Diagnostics: failure("Cannot create the function", err)}, nil
	}
	return provider.CreateResponse{ID: f.Name, Outputs: t.outputs(req.Resource, f.Name, req.Props)}, nil
}

// Update replaces the function's definition in place, or makes a new function when its name
// changed (the engine deletes the old one once the stack is updated).
func (p *Provider) Update(ctx context.Context, req provider.UpdateRequest) (provider.UpdateResponse, error) {
	if req.Resource.Type == fcService {
		name, _ := stringProp(req.NewProps, "ServiceName")
		return provider.UpdateResponse{ID: name, Outputs: serviceOutputs(req.Resource, name)}, nil
	}
	t, f, diags := p.function(req.Resource, req.NewProps)
	if diags.HasErrors() {
		return provider.UpdateResponse{ID: req.ID, Diagnostics: diags}, nil
	}
	oldName, _ := stringProp(req.OldProps, t.nameProp)
	switch {
	case f.Name == "" && oldName == "":
		f.Name = req.ID // a generated name stays
	case f.Name == "":
		f.Name = generatedName(req.Resource, req.Token)
	}
	var err error
	if f.Name == req.ID {
		err = p.fns.UpdateFunction(ctx, f)
	} else {
		err = p.fns.CreateFunction(ctx, f)
	}
	if err != nil {
		return provider.UpdateResponse{ID: req.ID, Diagnostics: failure("Cannot update the function", err)}, nil
	}
	return provider.UpdateResponse{ID: f.Name, Outputs: t.outputs(req.Resource, f.Name, req.NewProps)}, nil
}

// Delete deletes the function; one that is gone already is deleted.
func (p *Provider) Delete(ctx context.Context, req provider.DeleteRequest) (provider.DeleteResponse, error) {
	if req.Resource.Type == fcService || req.ID == "" || !validName.MatchString(req.ID) {
		return provider.DeleteResponse{}, nil // a failed create's generated id names no function
	}
	if err := p.fns.DeleteFunction(ctx, req.ID); err != nil && !errors.Is(err, ErrNotFound) {
		return provider.DeleteResponse{Diagnostics: failure("Cannot delete the function", err)}, nil
	}
	return provider.DeleteResponse{}, nil
}

// function is the Function that props define.
func (p *Provider) function(res provider.Resource, props cty.Value) (fnType, Function, diag.Diagnostics) {
	t, ok := typeOf(res.Type)
	if !ok {
		return t, Function{}, failure("Unknown type", fmt.Errorf("%s is not a function type", res.Type))
	}
	s, known, failures, _ := t.decode(props)
	var diags diag.Diagnostics
	for _, f := range failures {
		diags = append(diags, diag.Diagnostic{Severity: diag.Error, Summary: "Invalid " + strings.TrimSuffix(f.Property+" ", " "), Detail: f.Reason})
	}
	if !known && !diags.HasErrors() {
		diags = append(diags, diag.Diagnostic{Severity: diag.Error, Summary: "Properties are not known"})
	}
	if diags.HasErrors() {
		return t, Function{}, diags
	}
	kind := runtimeKind(s.Runtime)
	code, err := inlineCode(kind, s.Source)
	if err != nil {
		return t, Function{}, failure("Cannot pack the inline code", err)
	}
	return t, Function{Name: s.Name, Runtime: kind, Handler: s.Handler, Code: code, Timeout: time.Duration(s.Timeout) * time.Second,
		MemoryMB: s.MemoryMB, Env: s.Env}, nil
}

// outputs are the attributes Fn::GetAtt reads: Arn (AWS), ARN and names (Function Compute).
// Each ARN is a ServiceToken cairn resolves to the function.
func (t fnType) outputs(res provider.Resource, name string, props cty.Value) cty.Value {
	if t.name == fcFunction.name {
		svc, _ := stringProp(props, "ServiceName")
		arn := fmt.Sprintf("acs:fc:%s:%s:services/%s/functions/%s", res.Region, res.AccountID, svc, name)
		return cty.ObjectVal(map[string]cty.Value{"ARN": cty.StringVal(arn), "FunctionName": cty.StringVal(name),
			"ServiceName": cty.StringVal(svc), "FunctionId": cty.StringVal(name)})
	}
	arn := fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", res.Region, res.AccountID, name)
	return cty.ObjectVal(map[string]cty.Value{"Arn": cty.StringVal(arn)})
}

func serviceOutputs(res provider.Resource, name string) cty.Value {
	return cty.ObjectVal(map[string]cty.Value{"ServiceName": cty.StringVal(name), "ServiceId": cty.StringVal(name),
		"ARN": cty.StringVal(fmt.Sprintf("acs:fc:%s:%s:services/%s", res.Region, res.AccountID, name))})
}

// generatedName is CloudFormation's form of a name the template leaves out,
// STACK-LOGICALID-SUFFIX in at most 64 characters. The suffix comes from the call's token, so
// a call repeated after a restart names the same function, and two stacks never share one.
func generatedName(res provider.Resource, token string) string {
	sum := sha256.Sum256([]byte(res.StackKey + "\n" + res.StackID + "\n" + token))
	suffix := base32.StdEncoding.EncodeToString(sum[:])[:12]
	stack, logical := clean(res.StackName), clean(res.Name)
	if len(stack) > 25 {
		stack = stack[:25]
	}
	if room := 64 - len(stack) - len(suffix) - 2; len(logical) > room {
		logical = logical[:room]
	}
	return stack + "-" + logical + "-" + suffix
}

// clean keeps the characters a function name may hold.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

func stringProp(props cty.Value, name string) (string, bool) {
	props, _ = props.UnmarkDeep()
	if props == cty.NilVal || props.IsNull() || !props.IsKnown() {
		return "", false
	}
	v, ok := value.Get(props, name)
	if !ok || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		return "", false
	}
	return v.AsString(), true
}

func failure(summary string, err error) diag.Diagnostics {
	return diag.Diagnostics{{Severity: diag.Error, Summary: summary, Detail: err.Error()}}
}
