package tflang

import "github.com/hashicorp/hcl/v2"

// overrideBody is a provisioner's connection block laid over its resource's, as terraform
// merges them (configs.MergeBodies, the _override.tf rule): an argument of the override
// replaces the base's of the same name, a block type present in the override hides the
// base's blocks of that type. As in terraform, the base is read with the schema as given
// (its required arguments required) and the override with nothing required, and neither
// reports arguments outside the schema.
type overrideBody struct {
	base, override hcl.Body
}

var _ hcl.Body = overrideBody{}

func (b overrideBody) Content(schema *hcl.BodySchema) (*hcl.BodyContent, hcl.Diagnostics) {
	content, _, ds := b.PartialContent(schema)
	return content, ds
}

func (b overrideBody) PartialContent(schema *hcl.BodySchema) (*hcl.BodyContent, hcl.Body, hcl.Diagnostics) {
	base, baseRest, ds := b.base.PartialContent(schema)
	over, overRest, d := b.override.PartialContent(optional(schema))
	ds = append(ds, d...)
	content := &hcl.BodyContent{Attributes: hcl.Attributes{}, MissingItemRange: base.MissingItemRange}
	for k, a := range base.Attributes {
		content.Attributes[k] = a
	}
	for k, a := range over.Attributes {
		content.Attributes[k] = a
	}
	hidden := map[string]bool{}
	for _, blk := range over.Blocks {
		hidden[blk.Type] = true
	}
	for _, blk := range base.Blocks {
		if !hidden[blk.Type] {
			content.Blocks = append(content.Blocks, blk)
		}
	}
	content.Blocks = append(content.Blocks, over.Blocks...)
	return content, overrideBody{base: baseRest, override: overRest}, ds
}

func (b overrideBody) JustAttributes() (hcl.Attributes, hcl.Diagnostics) {
	attrs, ds := b.base.JustAttributes()
	over, d := b.override.JustAttributes()
	ds = append(ds, d...)
	out := hcl.Attributes{}
	for k, a := range attrs {
		out[k] = a
	}
	for k, a := range over {
		out[k] = a
	}
	return out, ds
}

func (b overrideBody) MissingItemRange() hcl.Range { return b.base.MissingItemRange() }

// optional is schema with no argument required.
func optional(schema *hcl.BodySchema) *hcl.BodySchema {
	out := &hcl.BodySchema{Blocks: schema.Blocks}
	for _, a := range schema.Attributes {
		a.Required = false
		out.Attributes = append(out.Attributes, a)
	}
	return out
}
