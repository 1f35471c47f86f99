package tfplugin

import (
	"fmt"

	"github.com/zclconf/go-cty/cty"
	ctyconvert "github.com/zclconf/go-cty/cty/convert"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"github.com/zclconf/go-cty/cty/msgpack"

	tf6 "github.com/cairn-dev/cairn/internal/tfplugin6"
	"github.com/cairn-dev/cairn/internal/value"
)

// encode is a value on the wire: msgpack of its schema type, marks stripped (a secret is
// only a secret to cairn; the provider needs the value).
func encode(v cty.Value, ty cty.Type) (*tf6.DynamicValue, error) {
	if v == cty.NilVal {
		v = cty.NullVal(ty)
	}
	v, _ = v.UnmarkDeep()
	v, err := convert(v, ty)
	if err != nil {
		return nil, err
	}
	b, err := msgpack.Marshal(v, ty)
	if err != nil {
		return nil, fmt.Errorf("cannot encode value: %w", err)
	}
	return &tf6.DynamicValue{Msgpack: b}, nil
}

// decode reads a value the provider sent, msgpack or (from older servers) JSON.
func decode(dv *tf6.DynamicValue, ty cty.Type) (cty.Value, error) {
	if dv == nil {
		return cty.NullVal(ty), nil
	}
	if len(dv.Msgpack) > 0 {
		v, err := msgpack.Unmarshal(dv.Msgpack, ty)
		if err != nil {
			return cty.NilVal, fmt.Errorf("cannot decode the provider's value: %w", err)
		}
		return v, nil
	}
	if len(dv.Json) > 0 {
		v, err := ctyjson.Unmarshal(dv.Json, ty)
		if err != nil {
			return cty.NilVal, fmt.Errorf("cannot decode the provider's value: %w", err)
		}
		return v, nil
	}
	return cty.NullVal(ty), nil
}

// convert brings a value stored or decoded elsewhere to the schema's exact type.
func convert(v cty.Value, ty cty.Type) (cty.Value, error) {
	if v.Type().Equals(ty) {
		return v, nil
	}
	if v.IsNull() {
		return cty.NullVal(ty), nil
	}
	if !v.IsKnown() {
		return cty.UnknownVal(ty), nil
	}
	out, err := ctyconvert.Convert(v, ty)
	if err != nil {
		return cty.NilVal, fmt.Errorf("value does not match the provider's schema: %w", err)
	}
	return out, nil
}

// markSensitive marks the attributes the schema calls sensitive, so cairn masks them.
func (b *block) markSensitive(v cty.Value) cty.Value {
	if v == cty.NilVal || v.IsNull() || !v.IsKnown() || !v.Type().IsObjectType() {
		return v
	}
	attrs := map[string]cty.Value{}
	for name, av := range v.AsValueMap() {
		switch {
		case b.attrs[name] != nil && b.attrs[name].sensitive:
			av = value.Secret(av)
		case b.blocks[name] != nil:
			av = b.blocks[name].markEach(av)
		}
		attrs[name] = av
	}
	return cty.ObjectVal(attrs)
}

func (n *nested) markEach(v cty.Value) cty.Value {
	if v.IsNull() || !v.IsKnown() {
		return v
	}
	switch n.nesting {
	case nestSingle, nestGroup:
		return n.block.markSensitive(v)
	}
	if !n.hasSensitive() {
		return v
	}
	// A collection holding secrets is masked whole: cty sets cannot hold marked elements.
	return value.Secret(v)
}

func (b *block) hasSensitive() bool {
	for _, a := range b.attrs {
		if a.sensitive {
			return true
		}
	}
	for _, n := range b.blocks {
		if n.hasSensitive() {
			return true
		}
	}
	return false
}

// proposedNew is the state a plan starts from, as terraform core builds it: the
// configuration, with each computed attribute the configuration leaves null taking its prior
// value. No prior (a create) proposes the configuration; no configuration (a delete) null.
func (b *block) proposedNew(prior, config cty.Value) cty.Value {
	if config.IsNull() || !config.IsKnown() {
		return config
	}
	if prior.IsNull() || !prior.IsKnown() {
		return config
	}
	attrs := map[string]cty.Value{}
	for name, cv := range config.AsValueMap() {
		pv := prior.GetAttr(name)
		switch {
		case b.attrs[name] != nil:
			if a := b.attrs[name]; a.computed && cv.IsNull() {
				cv = pv
			}
		case b.blocks[name] != nil:
			cv = b.blocks[name].proposedNew(pv, cv)
		}
		attrs[name] = cv
	}
	return cty.ObjectVal(attrs)
}

func (n *nested) proposedNew(prior, config cty.Value) cty.Value {
	if config.IsNull() || !config.IsKnown() || prior.IsNull() || !prior.IsKnown() {
		return config
	}
	switch n.nesting {
	case nestSingle, nestGroup:
		return n.block.proposedNew(prior, config)
	case nestList:
		ty := config.Type()
		if !ty.IsListType() || config.LengthInt() == 0 {
			return config
		}
		pl := prior.AsValueSlice()
		var out []cty.Value
		for i, cv := range config.AsValueSlice() {
			if i < len(pl) {
				cv = n.block.proposedNew(pl[i], cv)
			}
			out = append(out, cv)
		}
		return cty.ListVal(out)
	case nestMap:
		if !config.Type().IsMapType() || config.LengthInt() == 0 {
			return config
		}
		pm := prior.AsValueMap()
		out := map[string]cty.Value{}
		for k, cv := range config.AsValueMap() {
			if pv, ok := pm[k]; ok {
				cv = n.block.proposedNew(pv, cv)
			}
			out[k] = cv
		}
		return cty.MapVal(out)
	}
	return config // sets: elements have no identity to match by
}
