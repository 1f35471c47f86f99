package tflang

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/dynblock"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/budget"
)

// Dynamic blocks are expanded by hcl's ext/dynblock, as terraform does, with a provider's
// schema (EvalSpec) or, without one (Eval), with the schema the body's own syntax implies:
// its attributes and the types of its nested blocks, a dynamic block's content counting as
// blocks of its label's type.

// checkForEach charges the blocks a dynamic block's for_each will make before they are made:
// nested dynamic blocks multiply, and each body to decode costs four times a for
// expression's element.
func (e *evaluator) checkForEach(v cty.Value, x hcl.Expression, _ *hcl.EvalContext) hcl.Diagnostics {
	v, _ = v.Unmark()
	if !v.IsKnown() || v.IsNull() || !v.CanIterateElements() {
		return nil // dynblock reports what is wrong with it
	}
	if err := e.s.meter.Elements(int64(v.LengthInt())*4*budget.IterationCost, "dynamic block"); err != nil {
		return hcl.Diagnostics{stopDiag(err, x.Range())}
	}
	return nil
}

// expand is body with its dynamic blocks expanded in ctx.
func (e *evaluator) expand(body hcl.Body, ctx *hcl.EvalContext) hcl.Body {
	return dynblock.Expand(body, ctx, dynblock.OptCheckForEach(e.checkForEach))
}

// shape is the schema of a body read without a provider's schema.
type shape struct {
	attrs  map[string]bool
	blocks map[string]*shape
	labels int // of its blocks: dropped when decoded, but hcl wants their number
}

// shapeOf is the shape of a native syntax body; top says it is a resource's own body, whose
// meta-arguments (hidden by its partial content) are left out.
func shapeOf(b *hclsyntax.Body, top bool) *shape {
	s := &shape{attrs: map[string]bool{}, blocks: map[string]*shape{}}
	s.add(b, top)
	return s
}

func (s *shape) add(b *hclsyntax.Body, top bool) {
	for name := range b.Attributes {
		if !top || !metaArgument(name) {
			s.attrs[name] = true
		}
	}
	for _, blk := range b.Blocks {
		typ, body, labels := blk.Type, blk.Body, len(blk.Labels)
		switch {
		case top && metaBlock(typ):
			continue
		case typ == "dynamic" && len(blk.Labels) == 1:
			typ, labels = blk.Labels[0], 0
			if a, ok := blk.Body.Attributes["labels"]; ok {
				if xs, d := hcl.ExprList(a.Expr); !d.HasErrors() {
					labels = len(xs)
				}
			}
			body = nil
			for _, c := range blk.Body.Blocks {
				if c.Type == "content" {
					body = c.Body
				}
			}
		}
		child := s.blocks[typ]
		if child == nil {
			child = &shape{attrs: map[string]bool{}, blocks: map[string]*shape{}, labels: labels}
			s.blocks[typ] = child
		}
		if body != nil {
			child.add(body, false)
		}
	}
}

func (s *shape) schema() *hcl.BodySchema {
	out := &hcl.BodySchema{}
	for name := range s.attrs {
		out.Attributes = append(out.Attributes, hcl.AttributeSchema{Name: name})
	}
	for typ, b := range s.blocks {
		h := hcl.BlockHeaderSchema{Type: typ}
		for i := 0; i < b.labels; i++ {
			h.LabelNames = append(h.LabelNames, fmt.Sprintf("label%d", i))
		}
		out.Blocks = append(out.Blocks, h)
	}
	return out
}

// variables are the references of a body of shape s, the iterators of its dynamic blocks
// excepted.
func (s *shape) variables(node dynblock.WalkVariablesNode) []hcl.Traversal {
	vars, children := node.Visit(s.schema())
	for _, c := range children {
		if cs, ok := s.blocks[c.BlockTypeName]; ok {
			vars = append(vars, cs.variables(c.Node)...)
		}
	}
	return vars
}

// decodeShaped decodes an expanded body of shape s: its attributes, and each type of nested
// block as a tuple of objects in order; a type with a dynamic block whose for_each is not
// known yet is unknown.
func decodeShaped(body hcl.Body, s *shape, ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	content, ds := body.Content(s.schema())
	if content == nil {
		return cty.DynamicVal, ds
	}
	out := map[string]cty.Value{}
	for name, a := range content.Attributes {
		v, d := a.Expr.Value(ctx)
		ds = append(ds, d...)
		out[name] = v
	}
	blocks := map[string][]cty.Value{}
	unknown := map[string]bool{}
	var order []string
	for _, blk := range content.Blocks {
		if a, ok := content.Attributes[blk.Type]; ok {
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate argument",
				Detail: fmt.Sprintf("%q is both an argument and a block here.", blk.Type), Subject: blk.DefRange.Ptr(),
				Context: a.Range.Ptr()})
			continue
		}
		if _, seen := blocks[blk.Type]; !seen {
			order = append(order, blk.Type)
			blocks[blk.Type] = []cty.Value{}
		}
		if u, ok := blk.Body.(interface{ Unknown() bool }); ok && u.Unknown() {
			unknown[blk.Type] = true
			continue
		}
		v, d := decodeShaped(blk.Body, s.blocks[blk.Type], ctx)
		ds = append(ds, d...)
		blocks[blk.Type] = append(blocks[blk.Type], v)
	}
	for _, typ := range order {
		if unknown[typ] {
			out[typ] = cty.DynamicVal
		} else {
			out[typ] = cty.TupleVal(blocks[typ])
		}
	}
	return cty.ObjectVal(out), ds
}
