package tfplugin

import (
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	tf5 "github.com/cairn-dev/cairn/internal/tfplugin5"
	tf6 "github.com/cairn-dev/cairn/internal/tfplugin6"
)

// schemas is everything GetSchema told, in one form for both protocol versions.
type schemas struct {
	provider    *schema
	resources   map[string]*schema
	data        map[string]*schema
	planDestroy bool
	diagnostics []*tf6.Diagnostic
}

// schema is one resource type's, data source's or provider's schema.
type schema struct {
	version int64
	block   *block
	spec    hcldec.Spec
	ty      cty.Type
}

type block struct {
	attrs  map[string]*attribute
	blocks map[string]*nested
}

type attribute struct {
	ty                                      cty.Type
	required, optional, computed, sensitive bool
}

// nesting modes, shared by both versions' NestedBlock enums.
const (
	nestSingle = 1
	nestList   = 2
	nestSet    = 3
	nestMap    = 4
	nestGroup  = 5
)

type nested struct {
	block
	nesting  int
	min, max int
}

func newSchema(version int64, b *block) *schema {
	if b == nil {
		b = &block{}
	}
	spec := b.spec()
	return &schema{version: version, block: b, spec: spec, ty: hcldec.ImpliedType(spec).WithoutOptionalAttributesDeep()}
}

// spec is the decoder of a configuration body, as terraform decodes blocks.
func (b *block) spec() hcldec.Spec {
	out := hcldec.ObjectSpec{}
	for name, a := range b.attrs {
		out[name] = &hcldec.AttrSpec{Name: name, Type: a.ty, Required: a.required}
	}
	for name, n := range b.blocks {
		inner := n.block.spec()
		switch n.nesting {
		case nestSingle, nestGroup:
			out[name] = &hcldec.BlockSpec{TypeName: name, Nested: inner, Required: n.min > 0}
		case nestList:
			if hcldec.ImpliedType(inner).HasDynamicTypes() {
				out[name] = &hcldec.BlockTupleSpec{TypeName: name, Nested: inner, MinItems: n.min, MaxItems: n.max}
			} else {
				out[name] = &hcldec.BlockListSpec{TypeName: name, Nested: inner, MinItems: n.min, MaxItems: n.max}
			}
		case nestSet:
			out[name] = &hcldec.BlockSetSpec{TypeName: name, Nested: inner, MinItems: n.min, MaxItems: n.max}
		case nestMap:
			out[name] = &hcldec.BlockMapSpec{TypeName: name, Nested: inner, LabelNames: []string{"key"}}
		}
	}
	return out
}

func schemasFrom5(r *tf5.GetProviderSchema_Response) (*schemas, error) {
	s := &schemas{resources: map[string]*schema{}, data: map[string]*schema{}}
	var err error
	conv := func(x *tf5.Schema) *schema {
		if x == nil {
			return newSchema(0, nil)
		}
		b, e := block5(x.Block)
		if e != nil && err == nil {
			err = e
		}
		return newSchema(x.Version, b)
	}
	s.provider = conv(r.Provider)
	for k, v := range r.ResourceSchemas {
		s.resources[k] = conv(v)
	}
	for k, v := range r.DataSourceSchemas {
		s.data[k] = conv(v)
	}
	if c := r.ServerCapabilities; c != nil {
		s.planDestroy = c.PlanDestroy
	}
	for _, d := range r.Diagnostics {
		s.diagnostics = append(s.diagnostics, &tf6.Diagnostic{Severity: tf6.Diagnostic_Severity(d.Severity), Summary: d.Summary, Detail: d.Detail})
	}
	return s, err
}

func block5(b *tf5.Schema_Block) (*block, error) {
	out := &block{attrs: map[string]*attribute{}, blocks: map[string]*nested{}}
	if b == nil {
		return out, nil
	}
	for _, a := range b.Attributes {
		ty, err := ctyjson.UnmarshalType(a.Type)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: invalid type: %w", a.Name, err)
		}
		out.attrs[a.Name] = &attribute{ty: ty, required: a.Required, optional: a.Optional, computed: a.Computed, sensitive: a.Sensitive}
	}
	for _, nb := range b.BlockTypes {
		inner, err := block5(nb.Block)
		if err != nil {
			return nil, err
		}
		out.blocks[nb.TypeName] = &nested{block: *inner, nesting: int(nb.Nesting), min: int(nb.MinItems), max: int(nb.MaxItems)}
	}
	return out, nil
}

func schemasFrom6(r *tf6.GetProviderSchema_Response) (*schemas, error) {
	s := &schemas{resources: map[string]*schema{}, data: map[string]*schema{}, diagnostics: r.Diagnostics}
	var err error
	conv := func(x *tf6.Schema) *schema {
		if x == nil {
			return newSchema(0, nil)
		}
		b, e := block6(x.Block)
		if e != nil && err == nil {
			err = e
		}
		return newSchema(x.Version, b)
	}
	s.provider = conv(r.Provider)
	for k, v := range r.ResourceSchemas {
		s.resources[k] = conv(v)
	}
	for k, v := range r.DataSourceSchemas {
		s.data[k] = conv(v)
	}
	if c := r.ServerCapabilities; c != nil {
		s.planDestroy = c.PlanDestroy
	}
	return s, err
}

func block6(b *tf6.Schema_Block) (*block, error) {
	out := &block{attrs: map[string]*attribute{}, blocks: map[string]*nested{}}
	if b == nil {
		return out, nil
	}
	for _, a := range b.Attributes {
		ty, err := attrType6(a)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", a.Name, err)
		}
		out.attrs[a.Name] = &attribute{ty: ty, required: a.Required, optional: a.Optional, computed: a.Computed, sensitive: a.Sensitive}
	}
	for _, nb := range b.BlockTypes {
		inner, err := block6(nb.Block)
		if err != nil {
			return nil, err
		}
		out.blocks[nb.TypeName] = &nested{block: *inner, nesting: int(nb.Nesting), min: int(nb.MinItems), max: int(nb.MaxItems)}
	}
	return out, nil
}

// attrType6 is an attribute's type; a protocol 6 nested attribute is an object (or a
// collection of objects) of its nested attributes.
func attrType6(a *tf6.Schema_Attribute) (cty.Type, error) {
	if a.NestedType == nil {
		ty, err := ctyjson.UnmarshalType(a.Type)
		if err != nil {
			return cty.NilType, fmt.Errorf("invalid type: %w", err)
		}
		return ty, nil
	}
	attrs := map[string]cty.Type{}
	var optional []string
	for _, na := range a.NestedType.Attributes {
		ty, err := attrType6(na)
		if err != nil {
			return cty.NilType, err
		}
		attrs[na.Name] = ty
		if !na.Required {
			optional = append(optional, na.Name)
		}
	}
	sort.Strings(optional)
	obj := cty.ObjectWithOptionalAttrs(attrs, optional)
	switch a.NestedType.Nesting {
	case tf6.Schema_Object_LIST:
		return cty.List(obj), nil
	case tf6.Schema_Object_SET:
		return cty.Set(obj), nil
	case tf6.Schema_Object_MAP:
		return cty.Map(obj), nil
	default:
		return obj, nil
	}
}
