// Package kubeobject serves the CloudFormation/ROS dialect's Cairn::Kubernetes::Object: a
// Kubernetes object as a stack resource. It holds no Kubernetes code: it renames the type's
// properties to those of the Terraform resource kubernetes_object that cairn's Kubernetes
// provider plugin (cairn-kube) serves to every dialect, and hands each call to that plugin,
// one instance per tenant (the plugin acts as the stack's tenant on cairn's own kube API).
package kubeobject

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/tenant"
)

// Type is the CloudFormation/ROS dialect's resource type this package serves; PulumiType is
// Pulumi YAML's (package PulumiPackage, served by cairn without a plugin of that name).
const (
	Type          = "Cairn::Kubernetes::Object"
	PulumiPackage = "cairn"
	PulumiType    = "cairn:kubernetes:Object"
)

// pluginType is the plugin's resource type it maps to.
const pluginType = "kubernetes_object"

// CloudFormation and Pulumi map each dialect's property names to the plugin's attributes.
var (
	CloudFormation = map[string]string{"Manifest": "manifest", "Kubeconfig": "kubeconfig", "Context": "context", "Timeout": "timeout", "Wait": "wait"}
	Pulumi         = map[string]string{"manifest": "manifest", "kubeconfig": "kubeconfig", "context": "context", "timeout": "timeout", "wait": "wait"}
)

// Provider serves a dialect's Kubernetes object type through the plugin. Open starts
// (lazily) the plugin for a tenant; Properties is CloudFormation or Pulumi.
type Provider struct {
	Open       func(tenant string) (provider.Provider, error)
	Properties map[string]string

	mu      sync.Mutex
	tenants map[string]provider.Provider
}

var _ provider.Provider = (*Provider)(nil)

func (p *Provider) plugin(ctx context.Context) (provider.Provider, error) {
	name := tenant.From(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	if pl, ok := p.tenants[name]; ok {
		return pl, nil
	}
	pl, err := p.Open(name)
	if err != nil {
		return nil, err
	}
	resp, err := pl.Configure(ctx, provider.ConfigureRequest{Config: cty.EmptyObjectVal})
	if err == nil && resp.Diagnostics.HasErrors() {
		err = fmt.Errorf("%s", resp.Diagnostics.Error())
	}
	if err != nil {
		_ = pl.Close()
		return nil, fmt.Errorf("cannot start cairn's Kubernetes provider: %w", err)
	}
	if p.tenants == nil {
		p.tenants = map[string]provider.Provider{}
	}
	p.tenants[name] = pl
	return pl, nil
}

// attributes is props (the template's properties) as the plugin's configuration. Unknown
// properties were refused by Check; Timeout may be a duration or a number of seconds.
func (p *Provider) attributes(props cty.Value) cty.Value {
	if props == cty.NilVal {
		return props
	}
	attrs := map[string]cty.Value{
		"manifest": cty.NullVal(cty.DynamicPseudoType), "kubeconfig": cty.NullVal(cty.String),
		"context": cty.NullVal(cty.String), "timeout": cty.NullVal(cty.String), "wait": cty.NullVal(cty.Bool),
		"id": cty.NullVal(cty.String), "uid": cty.NullVal(cty.String), "status": cty.NullVal(cty.DynamicPseudoType),
	}
	if props.IsNull() || !props.IsKnown() || !props.Type().IsObjectType() && !props.Type().IsMapType() {
		return cty.ObjectVal(attrs)
	}
	for it := props.ElementIterator(); it.Next(); {
		k, v := it.Element()
		name, ok := p.Properties[k.AsString()]
		if !ok {
			continue
		}
		switch name {
		case "manifest":
			attrs[name] = v
		case "wait":
			attrs[name] = toBool(v)
		case "timeout":
			attrs[name] = toTimeout(v)
		default:
			attrs[name] = toString(v)
		}
	}
	return cty.ObjectVal(attrs)
}

func toString(v cty.Value) cty.Value {
	raw, marks := v.Unmark()
	if raw.IsNull() || !raw.IsKnown() || raw.Type() != cty.String {
		if raw.Type() == cty.String || !raw.IsKnown() && raw.Type() == cty.DynamicPseudoType {
			return cty.UnknownVal(cty.String).WithMarks(marks)
		}
		return cty.NullVal(cty.String).WithMarks(marks)
	}
	return raw.WithMarks(marks)
}

func toBool(v cty.Value) cty.Value {
	raw, marks := v.Unmark()
	switch {
	case !raw.IsKnown():
		return cty.UnknownVal(cty.Bool).WithMarks(marks)
	case raw.IsNull():
		return cty.NullVal(cty.Bool)
	case raw.Type() == cty.Bool:
		return raw.WithMarks(marks)
	case raw.Type() == cty.String:
		b, err := strconv.ParseBool(raw.AsString())
		if err == nil {
			return cty.BoolVal(b).WithMarks(marks)
		}
	}
	return cty.NullVal(cty.Bool)
}

func toTimeout(v cty.Value) cty.Value {
	raw, marks := v.Unmark()
	if raw.IsKnown() && !raw.IsNull() && raw.Type() == cty.Number {
		f, _ := raw.AsBigFloat().Int64()
		return cty.StringVal(strconv.FormatInt(f, 10) + "s").WithMarks(marks)
	}
	return toString(v)
}

// check refuses properties the type does not have.
func (p *Provider) check(props cty.Value) []provider.CheckFailure {
	var out []provider.CheckFailure
	if props.IsNull() || !props.IsKnown() || !props.Type().IsObjectType() && !props.Type().IsMapType() {
		return nil
	}
	var names []string
	manifest := ""
	for prop, attr := range p.Properties {
		names = append(names, prop)
		if attr == "manifest" {
			manifest = prop
		}
	}
	sort.Strings(names)
	has := false
	for it := props.ElementIterator(); it.Next(); {
		k, _ := it.Element()
		if _, ok := p.Properties[k.AsString()]; !ok {
			out = append(out, provider.CheckFailure{Property: k.AsString(),
				Reason: "a Kubernetes object has no property " + strconv.Quote(k.AsString()) + "; it takes " + strings.Join(names, ", ")})
		}
		has = has || k.AsString() == manifest
	}
	if !has {
		out = append(out, provider.CheckFailure{Property: manifest, Reason: manifest + " is required: the Kubernetes object, with apiVersion, kind and metadata"})
	}
	return out
}

func pluginResource(r provider.Resource) provider.Resource {
	r.Type = pluginType
	return r
}

func (p *Provider) Capabilities() provider.Capabilities { return provider.Capabilities{Read: true} }

func (p *Provider) Check(ctx context.Context, req provider.CheckRequest) (provider.CheckResponse, error) {
	if failures := p.check(req.Props); len(failures) > 0 {
		return provider.CheckResponse{Props: req.Props, Failures: failures}, nil
	}
	pl, err := p.plugin(ctx)
	if err != nil {
		return provider.CheckResponse{}, err
	}
	resp, err := pl.Check(ctx, provider.CheckRequest{Resource: pluginResource(req.Resource), Props: p.attributes(req.Props), OldProps: p.attributes(req.OldProps)})
	resp.Props = req.Props // the template's own shape is what is stored
	for i := range resp.Failures {
		resp.Failures[i].Property = p.propertyOf(resp.Failures[i].Property)
	}
	return resp, err
}

// propertyOf is the property an attribute path of the plugin is about.
func (p *Provider) propertyOf(attr string) string {
	for prop, a := range p.Properties {
		if attr == a || len(attr) > len(a) && attr[:len(a)+1] == a+"." {
			return prop + attr[len(a):]
		}
	}
	return attr
}

func (p *Provider) Diff(ctx context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
	pl, err := p.plugin(ctx)
	if err != nil {
		return provider.DiffResponse{}, err
	}
	req.Resource, req.OldProps, req.NewProps = pluginResource(req.Resource), p.attributes(req.OldProps), p.attributes(req.NewProps)
	return pl.Diff(ctx, req)
}

func (p *Provider) Create(ctx context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
	pl, err := p.plugin(ctx)
	if err != nil {
		return provider.CreateResponse{}, err
	}
	req.Resource, req.Props = pluginResource(req.Resource), p.attributes(req.Props)
	return pl.Create(ctx, req)
}

func (p *Provider) Read(ctx context.Context, req provider.ReadRequest) (provider.ReadResponse, error) {
	pl, err := p.plugin(ctx)
	if err != nil {
		return provider.ReadResponse{}, err
	}
	props := req.Props
	req.Resource, req.Props = pluginResource(req.Resource), p.attributes(req.Props)
	resp, err := pl.Read(ctx, req)
	resp.Props, resp.PropsRead = props, false // drift shows in the outputs read
	return resp, err
}

func (p *Provider) Update(ctx context.Context, req provider.UpdateRequest) (provider.UpdateResponse, error) {
	pl, err := p.plugin(ctx)
	if err != nil {
		return provider.UpdateResponse{}, err
	}
	req.Resource, req.OldProps, req.NewProps = pluginResource(req.Resource), p.attributes(req.OldProps), p.attributes(req.NewProps)
	return pl.Update(ctx, req)
}

func (p *Provider) Delete(ctx context.Context, req provider.DeleteRequest) (provider.DeleteResponse, error) {
	pl, err := p.plugin(ctx)
	if err != nil {
		return provider.DeleteResponse{}, err
	}
	req.Resource, req.Props = pluginResource(req.Resource), p.attributes(req.Props)
	return pl.Delete(ctx, req)
}

func (p *Provider) Schema(context.Context, provider.SchemaRequest) (provider.Schema, error) {
	return provider.Schema{}, provider.ErrNotSupported
}

func (p *Provider) Configure(context.Context, provider.ConfigureRequest) (provider.ConfigureResponse, error) {
	return provider.ConfigureResponse{}, nil
}

func (p *Provider) ReadData(context.Context, provider.ReadDataRequest) (provider.ReadDataResponse, error) {
	return provider.ReadDataResponse{}, provider.ErrNotSupported
}

func (p *Provider) Import(context.Context, provider.ImportRequest) (provider.ImportResponse, error) {
	return provider.ImportResponse{}, provider.ErrNotSupported
}

// Close stops every tenant's plugin.
func (p *Provider) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var first error
	for _, pl := range p.tenants {
		if err := pl.Close(); err != nil && first == nil {
			first = err
		}
	}
	p.tenants = nil
	return first
}

// PulumiSchema is the Pulumi package schema of PulumiPackage, which Pulumi YAML reads to
// resolve the type and its properties.
const PulumiSchema = `{
  "name": "cairn",
  "version": "0.1.0",
  "description": "cairn's own resource types",
  "resources": {
    "cairn:kubernetes:Object": {
      "description": "A Kubernetes object, applied server-side by the field manager cairn and waited for until ready (kstatus).",
      "inputProperties": {
        "manifest": {"$ref": "pulumi.json#/Any", "description": "The object: apiVersion, kind, metadata and the rest."},
        "kubeconfig": {"type": "string", "secret": true, "description": "A kubeconfig's content; unset: cairn's own kube API, as the stack's tenant."},
        "context": {"type": "string", "description": "The kubeconfig context to use; unset: its current context."},
        "timeout": {"type": "string", "description": "How long to wait for readiness and deletion (5m when unset)."},
        "wait": {"type": "boolean", "description": "Whether to wait for readiness (true when unset)."}
      },
      "requiredInputs": ["manifest"],
      "properties": {
        "manifest": {"$ref": "pulumi.json#/Any"},
        "kubeconfig": {"type": "string", "secret": true},
        "context": {"type": "string"},
        "timeout": {"type": "string"},
        "wait": {"type": "boolean"},
        "uid": {"type": "string", "description": "The object's metadata.uid."},
        "status": {"$ref": "pulumi.json#/Any", "description": "The object's status as last read."}
      },
      "required": ["manifest", "uid", "status"]
    }
  }
}`
