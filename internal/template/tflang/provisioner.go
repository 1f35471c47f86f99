package tflang

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provisioner"
	"github.com/cairn-dev/cairn/internal/template"
)

// provBlock is a provisioner block of a resource, read as terraform reads it
// (configs.decodeProvisionerBlock): when, on_failure, an optional connection block and the
// `_` escaping block are meta-arguments; the rest is the provisioner's own configuration.
type provBlock struct {
	typ   string
	when  template.ProvisionerWhen
	cont  bool
	body  hcl.Body
	block *hcl.Block
}

var provisionerMetaSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "when"}, {Name: "on_failure"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "_"}, {Type: "connection"}, {Type: "lifecycle"}},
}

// readProvisioners reads the provisioner blocks among a resource's meta-argument blocks.
// Connection blocks are accepted and not evaluated: only file and remote-exec use them, and
// cairn refuses those.
func (r *resourceBlock) readProvisioners(blocks hcl.Blocks) hcl.Diagnostics {
	var ds hcl.Diagnostics
	for _, b := range blocks {
		if b.Type != "provisioner" {
			continue
		}
		if r.mode == template.Data {
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unsupported block type",
				Detail: `Blocks of type "provisioner" are not expected here.`, Subject: &b.DefRange})
			continue
		}
		p, d := readProvisioner(b)
		ds = append(ds, d...)
		if p != nil {
			r.provs = append(r.provs, p)
		}
	}
	return ds
}

func readProvisioner(b *hcl.Block) (*provBlock, hcl.Diagnostics) {
	p := &provBlock{typ: b.Labels[0], when: template.WhenCreate, block: b}
	content, body, ds := b.Body.PartialContent(provisionerMetaSchema)
	p.body = body
	for _, removed := range provisioner.Removed {
		if p.typ == removed {
			return nil, append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: fmt.Sprintf("The %q provisioner has been removed", p.typ),
				Detail: fmt.Sprintf("The %q provisioner was deprecated in Terraform 0.13.4 and has been removed from Terraform.", p.typ), Subject: &b.LabelRanges[0]})
		}
	}
	if !provisioner.Known(p.typ) {
		return nil, append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid provisioner type",
			Detail: fmt.Sprintf("There is no provisioner %q: terraform has local-exec, file and remote-exec.", p.typ), Subject: &b.LabelRanges[0]})
	}
	if why := provisioner.Refused(p.typ); why != "" {
		return nil, append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: fmt.Sprintf("Unsupported provisioner %q", p.typ),
			Detail: why, Subject: &b.LabelRanges[0]})
	}
	if a, ok := content.Attributes["when"]; ok {
		switch keyword(a.Expr) {
		case "create":
		case "destroy":
			p.when = template.WhenDestroy
		default:
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: `Invalid "when" keyword`,
				Detail: `The "when" argument requires one of the following keywords: create or destroy.`, Subject: a.Expr.Range().Ptr()})
		}
	}
	if a, ok := content.Attributes["on_failure"]; ok {
		switch keyword(a.Expr) {
		case "continue":
			p.cont = true
		case "fail":
		default:
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: `Invalid "on_failure" keyword`,
				Detail: `The "on_failure" argument requires one of the following keywords: continue or fail.`, Subject: a.Expr.Range().Ptr()})
		}
	}
	escaped := false
	for _, blk := range content.Blocks {
		switch blk.Type {
		case "_":
			if escaped {
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate escaping block",
					Detail: `A provisioner block can have only one "_" block.`, Subject: &blk.DefRange})
				continue
			}
			escaped = true
			p.body = hcl.MergeBodies([]hcl.Body{p.body, blk.Body})
		case "lifecycle":
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Reserved block type name in provisioner block",
				Detail: `The block type name "lifecycle" is reserved for use by Terraform in a future version.`, Subject: &blk.TypeRange})
		}
	}
	if schema, ok := provisioner.BodySchema(p.typ); ok {
		_, d := p.body.Content(schema)
		ds = append(ds, d...)
	}
	if p.when == template.WhenDestroy {
		ds = append(ds, onlySelfRefs(p.body)...)
	}
	return p, ds
}

// keyword is a keyword argument (when = destroy), also in its legacy quoted form, which
// terraform still accepts, and in JSON.
func keyword(x hcl.Expression) string {
	if kw := hcl.ExprAsKeyword(x); kw != "" {
		return kw
	}
	if v, d := x.Value(nil); !d.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() {
		return v.AsString()
	}
	return ""
}

// onlySelfRefs refuses what a destroy-time provisioner may not reference: anything but self,
// count.index, each.key, path and terraform.
func onlySelfRefs(body hcl.Body) hcl.Diagnostics {
	var ds hcl.Diagnostics
	attrs, _ := body.JustAttributes()
	for _, a := range attrs {
		for _, t := range a.Expr.Variables() {
			ok := false
			switch t.RootName() {
			case "self", "path", "terraform":
				ok = true
			case "count", "each":
				want := "index"
				if t.RootName() == "each" {
					want = "key"
				}
				if len(t) == 2 {
					if s, isAttr := t[1].(hcl.TraverseAttr); isAttr && s.Name == want {
						ok = true
					}
				}
			}
			if !ok {
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid reference from destroy provisioner",
					Detail: "Destroy-time provisioners and their connection configurations may only reference attributes of the related resource, " +
						"via 'self', 'count.index', or 'each.key'.\n\nReferences to other resources during the destroy phase can cause dependency " +
						"cycles and interact poorly with create_before_destroy.", Subject: t.SourceRange().Ptr()})
			}
		}
	}
	return ds
}

// provisionerRefs are what the creation-time provisioners of r reference: dependencies of
// the resource, as terraform counts them (self is the resource itself).
func (r *resourceBlock) provisionerRefs() []hcl.Traversal {
	var out []hcl.Traversal
	for _, p := range r.provs {
		if p.when != template.WhenCreate {
			continue
		}
		attrs, _ := p.body.JustAttributes()
		for _, a := range attrs {
			out = append(out, a.Expr.Variables()...)
		}
	}
	return out
}

// provisioners are the template provisioners of one instance of r.
func (m *module) provisioners(r *resourceBlock, k key) []*template.Provisioner {
	var out []*template.Provisioner
	for _, p := range r.provs {
		out = append(out, &template.Provisioner{Type: p.typ, When: p.when, Continue: p.cont,
			Config: &selfBody{m: m, body: p.body, key: k}, Range: rangeOf(p.block.DefRange), TypeRange: rangeOf(p.block.LabelRanges[0])})
	}
	return out
}

// selfBody is a provisioner's configuration: a template.SelfExpr.
type selfBody struct {
	m    *module
	body hcl.Body
	key  key
}

// EvalSelf decodes the body with spec, self being the resource's object.
func (b *selfBody) EvalSelf(s template.Scope, self cty.Value, spec hcldec.Spec) (cty.Value, diag.Diagnostics) {
	e := b.m.evaluator(s, b.key)
	defer e.done()
	e.s.self = self
	if ds := e.nest(b.body.MissingItemRange()); ds.HasErrors() {
		return cty.DynamicVal, convertDiags(ds, b.m.files)
	}
	defer e.unnest()
	ctx, ds := e.context(hcldec.Variables(b.body, spec))
	if ds.HasErrors() {
		return cty.DynamicVal, convertDiags(ds, b.m.files)
	}
	v, d := hcldec.Decode(b.body, spec, ctx)
	return e.result(v, append(ds, d...), b.body.MissingItemRange())
}

// provisionerExprs are the expressions of a provisioner block to check statically: its
// arguments and its connection block's, not the when and on_failure keywords.
func provisionerExprs(blk *hclsyntax.Block) []checked {
	var out []checked
	for name, a := range blk.Body.Attributes {
		if name != "when" && name != "on_failure" {
			out = append(out, checked{x: a.Expr})
		}
	}
	for _, inner := range blk.Body.Blocks {
		out = append(out, bodyExprs(inner.Body, false, nil)...)
	}
	return out
}
