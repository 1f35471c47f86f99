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
	own   *hcl.Block // its own connection block
	conn  hcl.Body   // its connection: own laid over the resource's; nil if neither
}

var provisionerMetaSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "when"}, {Name: "on_failure"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "_"}, {Type: "connection"}, {Type: "lifecycle"}},
}

// readProvisioners reads the provisioner blocks among a resource's meta-argument blocks,
// and the resource's connection block, which each provisioner's own connection block
// overrides argument by argument.
func (r *resourceBlock) readProvisioners(blocks hcl.Blocks) hcl.Diagnostics {
	var ds hcl.Diagnostics
	var base *hcl.Block
	for _, b := range blocks {
		switch {
		case b.Type == "connection" && r.mode == template.Managed:
			if base != nil {
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate connection block",
					Detail: fmt.Sprintf("This resource already has a connection block at %s.", base.DefRange), Subject: &b.DefRange})
				continue
			}
			base = b
		case b.Type == "connection" || b.Type == "provisioner" && r.mode != template.Managed:
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unsupported block type",
				Detail: fmt.Sprintf("Blocks of type %q are not expected here.", b.Type), Subject: &b.DefRange})
		case b.Type == "provisioner":
			p, d := readProvisioner(b)
			ds = append(ds, d...)
			if p != nil {
				r.provs = append(r.provs, p)
			}
		}
	}
	// A destroy-time provisioner uses the resource's connection too: it may reference only
	// self, as terraform checks once for the resource.
	for _, p := range r.provs {
		if base != nil && p.when == template.WhenDestroy {
			ds = append(ds, onlySelfRefs(base.Body)...)
			break
		}
	}
	for _, p := range r.provs {
		switch {
		case base != nil && p.own != nil:
			p.conn = overrideBody{base: base.Body, override: p.own.Body}
		case base != nil:
			p.conn = base.Body
		case p.own != nil:
			p.conn = p.own.Body
		}
		ds = append(ds, checkConnection(p.conn)...)
	}
	r.conn = base
	return ds
}

// checkConnection checks a provisioner's connection before anything is evaluated, as
// terraform's validate: arguments of no communicator, a missing host (terraform checks the
// merged block so), and a connection type cairn does not open.
func checkConnection(conn hcl.Body) hcl.Diagnostics {
	if conn == nil {
		return nil
	}
	content, ds := conn.Content(provisioner.ConnectionSchema())
	if a, ok := content.Attributes["type"]; ok {
		if v, d := a.Expr.Value(nil); !d.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() {
			if why := provisioner.RefusedConnection(v.AsString()); why != "" {
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unsupported connection type",
					Detail: why + ".", Subject: a.Expr.Range().Ptr()})
			}
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
		case "connection":
			if p.own != nil {
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate connection block",
					Detail: fmt.Sprintf("This provisioner already has a connection block at %s.", p.own.DefRange), Subject: &blk.DefRange})
				continue
			}
			p.own = blk
			if p.when == template.WhenDestroy {
				ds = append(ds, onlySelfRefs(blk.Body)...)
			}
		case "lifecycle":
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Reserved block type name in provisioner block",
				Detail: `The block type name "lifecycle" is reserved for use by Terraform in a future version.`, Subject: &blk.TypeRange})
		}
	}
	if schema, ok := provisioner.BodySchema(p.typ); ok {
		content, d := p.body.Content(schema)
		ds = append(ds, d...)
		if !d.HasErrors() {
			if inv := provisioner.Validate(p.typ, provisionerShape(content.Attributes)); inv != nil {
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: inv.Summary, Detail: inv.Detail, Subject: &b.DefRange})
			}
		}
	}
	if p.when == template.WhenDestroy {
		ds = append(ds, onlySelfRefs(p.body)...)
	}
	return p, ds
}

// provisionerShape stands for a provisioner block's value before it can be evaluated, for the checks
// terraform makes at validate: an argument is null when it is the literal null, unknown
// otherwise.
func provisionerShape(attrs hcl.Attributes) cty.Value {
	obj := map[string]cty.Value{}
	for name, a := range attrs {
		obj[name] = cty.DynamicVal
		if v, d := a.Expr.Value(nil); !d.HasErrors() && v.IsNull() {
			obj[name] = cty.NullVal(cty.DynamicPseudoType)
		}
	}
	return cty.ObjectVal(obj)
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
	refs := func(body hcl.Body) {
		attrs, _ := body.JustAttributes()
		for _, a := range attrs {
			out = append(out, a.Expr.Variables()...)
		}
	}
	if r.conn != nil { // the resource's connection block counts even for destroy-time ones, as in terraform
		refs(r.conn.Body)
	}
	for _, p := range r.provs {
		if p.when != template.WhenCreate {
			continue
		}
		refs(p.body)
		if p.own != nil {
			refs(p.own.Body)
		}
	}
	return out
}

// provisioners are the template provisioners of one instance of r.
func (m *module) provisioners(r *resourceBlock, k key) []*template.Provisioner {
	var out []*template.Provisioner
	for _, p := range r.provs {
		tp := &template.Provisioner{Type: p.typ, When: p.when, Continue: p.cont,
			Config: &selfBody{m: m, body: p.body, key: k}, Range: rangeOf(p.block.DefRange), TypeRange: rangeOf(p.block.LabelRanges[0])}
		if p.conn != nil {
			tp.Connection = &selfBody{m: m, body: p.conn, key: k}
		}
		out = append(out, tp)
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
