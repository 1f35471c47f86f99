package tfplugin

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
)

// This file holds cairn's own model of a provider schema. Both protocol adapters translate
// their protobuf schema into it, so that decoding, ProposedNew, plan checks and sensitivity
// marking are written once. A schema is immutable once built and may be shared between
// Provider instances (see the schema cache).

// nesting is how a nested block or a nested attribute type repeats. The numbers are those of
// both protocols' enums.
type nesting int

const (
	nestSingle nesting = 1
	nestList   nesting = 2
	nestSet    nesting = 3
	nestMap    nesting = 4
	nestGroup  nesting = 5 // blocks only
)

// schemas is everything a provider's GetSchema/GetProviderSchema told.
type schemas struct {
	provider     *schema
	providerMeta *schema // nil when the provider has no provider_meta schema
	resources    map[string]*schema
	data         map[string]*schema
	ephemeral    map[string]*schema // ephemeral resource types (ephemeral.go)
	caps         serverCaps
	diags        diag.Diagnostics
	raw          []byte // the GetProviderSchema answer's wire form, for the disk cache; nil when unknown
}

// serverCaps are the optional behaviours the provider announces.
type serverCaps struct {
	planDestroy       bool // PlanResourceChange is called for deletes too
	schemaOptional    bool // a later process of the same binary may skip GetSchema
	moveResourceState bool
}

// schema is the schema of one resource type, data source or provider configuration.
type schema struct {
	version int64
	block   *block
	spec    hcldec.Spec
	ty      cty.Type // the implied type: what every value of this schema conforms to
}

// block is a configuration block: attributes and nested blocks.
type block struct {
	attrs  map[string]*attribute
	blocks map[string]*nestedBlock

	// set by finish, once the block is complete
	ty        cty.Type // implied type
	sensitive bool     // some attribute below is sensitive
}

// attribute is one attribute of a block or of a nested attribute type.
type attribute struct {
	ty                                      cty.Type // implied type (no optional attributes)
	nested                                  *object  // protocol 6 nested attribute type, or nil
	required, optional, computed, sensitive bool
	writeOnly                               bool
}

// object is a protocol 6 nested attribute type: an object, or a list, set or map of them.
type object struct {
	attrs   map[string]*attribute
	nesting nesting
}

// nestedBlock is a block type nested in another block.
type nestedBlock struct {
	*block
	nesting  nesting
	min, max int
}

func newBlock() *block {
	return &block{attrs: map[string]*attribute{}, blocks: map[string]*nestedBlock{}}
}

func newSchema(version int64, b *block) *schema {
	if b == nil {
		b = newBlock()
	}
	b.finish()
	return &schema{version: version, block: b, spec: b.spec(), ty: b.ty}
}

// finish computes what the block's users ask for often: its implied type and whether it holds
// sensitive attributes. Nested blocks are finished first.
func (b *block) finish() {
	for _, nb := range b.blocks {
		nb.block.finish()
	}
	b.ty = hcldec.ImpliedType(b.spec()).WithoutOptionalAttributesDeep()
	b.sensitive = b.hasSensitive()
}

// spec is the decoder of a configuration body, built as terraform builds it, so a body decodes
// to the same value as in terraform: required attributes, min/max blocks and group blocks that
// are never null.
func (b *block) spec() hcldec.Spec {
	out := hcldec.ObjectSpec{}
	for name, a := range b.attrs {
		out[name] = &hcldec.AttrSpec{Name: name, Type: a.specType(), Required: a.required}
	}
	for name, nb := range b.blocks {
		if _, dup := out[name]; dup {
			continue // invalid schema: an attribute wins, as in terraform
		}
		inner := nb.block.spec()
		dynamic := hcldec.ImpliedType(inner).HasDynamicTypes()
		switch nb.nesting {
		case nestSingle:
			out[name] = &hcldec.BlockSpec{TypeName: name, Nested: inner, Required: nb.min == 1}
		case nestGroup:
			out[name] = &hcldec.DefaultSpec{
				Primary: &hcldec.BlockSpec{TypeName: name, Nested: inner, Required: nb.min == 1},
				Default: &hcldec.LiteralSpec{Value: nb.block.emptyValue()},
			}
		case nestList:
			if dynamic {
				out[name] = &hcldec.BlockTupleSpec{TypeName: name, Nested: inner, MinItems: nb.min, MaxItems: nb.max}
			} else {
				out[name] = &hcldec.BlockListSpec{TypeName: name, Nested: inner, MinItems: nb.min, MaxItems: nb.max}
			}
		case nestSet:
			out[name] = &hcldec.BlockSetSpec{TypeName: name, Nested: inner, MinItems: nb.min, MaxItems: nb.max}
		case nestMap:
			if dynamic {
				out[name] = &hcldec.BlockObjectSpec{TypeName: name, Nested: inner, LabelNames: []string{"key"}}
			} else {
				out[name] = &hcldec.BlockMapSpec{TypeName: name, Nested: inner, LabelNames: []string{"key"}}
			}
		}
	}
	return out
}

// specType is the type an attribute decodes with: for nested attribute types, objects whose
// non-required attributes are optional, so a configuration may leave them out.
func (a *attribute) specType() cty.Type {
	if a.nested == nil {
		return a.ty
	}
	return a.nested.specType()
}

func (o *object) specType() cty.Type {
	tys := make(map[string]cty.Type, len(o.attrs))
	var optional []string
	for name, a := range o.attrs {
		tys[name] = a.specType()
		if !a.required {
			optional = append(optional, name)
		}
	}
	sort.Strings(optional)
	obj := cty.Object(tys)
	if len(optional) > 0 {
		obj = cty.ObjectWithOptionalAttrs(tys, optional)
	}
	switch o.nesting {
	case nestList:
		return cty.List(obj)
	case nestSet:
		return cty.Set(obj)
	case nestMap:
		return cty.Map(obj)
	default:
		return obj
	}
}

// objectType is the type of one element of a nested attribute type.
func (o *object) objectType() cty.Type {
	tys := make(map[string]cty.Type, len(o.attrs))
	for name, a := range o.attrs {
		tys[name] = a.ty
	}
	return cty.Object(tys)
}

// emptyValue is what an empty configuration body decodes to: every attribute null, no nested
// blocks (but a group block present and empty).
func (b *block) emptyValue() cty.Value {
	vals := make(map[string]cty.Value, len(b.attrs)+len(b.blocks))
	for name, a := range b.attrs {
		vals[name] = cty.NullVal(a.ty)
	}
	for name, nb := range b.blocks {
		vals[name] = nb.emptyValue()
	}
	return cty.ObjectVal(vals)
}

// emptyValue is the value of a nested block type with no blocks.
func (nb *nestedBlock) emptyValue() cty.Value {
	ety := nb.block.ty
	switch nb.nesting {
	case nestGroup:
		return nb.block.emptyValue()
	case nestList:
		if ety.HasDynamicTypes() {
			return cty.EmptyTupleVal
		}
		return cty.ListValEmpty(ety)
	case nestSet:
		return cty.SetValEmpty(ety)
	case nestMap:
		if ety.HasDynamicTypes() {
			return cty.EmptyObjectVal
		}
		return cty.MapValEmpty(ety)
	default:
		return cty.NullVal(ety)
	}
}

// hasSensitive reports whether any attribute below the block is sensitive.
func (b *block) hasSensitive() bool {
	for _, a := range b.attrs {
		if a.sensitive || (a.nested != nil && a.nested.hasSensitive()) {
			return true
		}
	}
	for _, nb := range b.blocks {
		if nb.block.hasSensitive() {
			return true
		}
	}
	return false
}

func (o *object) hasSensitive() bool {
	for _, a := range o.attrs {
		if a.sensitive || (a.nested != nil && a.nested.hasSensitive()) {
			return true
		}
	}
	return false
}

// lookup finds the schema of typ, or says which types the provider serves.
func (s *schemas) lookup(name string, kind provider.SchemaKind, typ string) (*schema, error) {
	var m map[string]*schema
	what := "resource type"
	switch kind {
	case provider.SchemaProvider:
		return s.provider, nil
	case provider.SchemaData:
		m, what = s.data, "data source"
	case provider.SchemaResource, "":
		m = s.resources
	case provider.SchemaEphemeral:
		m, what = s.ephemeral, "ephemeral resource type"
	default:
		return nil, fmt.Errorf("provider %s: unknown schema kind %q", name, kind)
	}
	if sc, ok := m[typ]; ok {
		return sc, nil
	}
	served := make([]string, 0, len(m))
	for n := range m {
		served = append(served, n)
	}
	sort.Strings(served)
	list := "none"
	if len(served) > 0 {
		list = strings.Join(served, ", ")
	}
	return nil, &unknownType{fmt.Sprintf("provider %s does not support %s %q; the %ss it serves: %s", name, what, typ, what, list)}
}

// unknownType is a lookup of a type the provider does not serve.
type unknownType struct{ msg string }

func (e *unknownType) Error() string { return e.msg }
func (e *unknownType) Unwrap() error { return provider.ErrUnknownType }

// unknown is an object of the block's type before it is applied: every attribute and nested
// block unknown, the sensitive attributes marked, so expressions over it know what is secret.
func (b *block) unknown() cty.Value {
	if !b.ty.IsObjectType() || len(b.ty.AttributeTypes()) == 0 {
		return cty.UnknownVal(b.ty)
	}
	attrs := map[string]cty.Value{}
	for name, at := range b.ty.AttributeTypes() {
		attrs[name] = cty.UnknownVal(at)
	}
	return b.mark(cty.ObjectVal(attrs))
}

// attributes describes the block's own attributes, sorted by name.
func (b *block) attributes() []provider.Attribute {
	out := make([]provider.Attribute, 0, len(b.attrs))
	for name, a := range b.attrs {
		out = append(out, provider.Attribute{Name: name, Type: a.ty, Required: a.required, Optional: a.optional,
			Computed: a.computed, Sensitive: a.sensitive})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
