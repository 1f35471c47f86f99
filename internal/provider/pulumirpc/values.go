package pulumirpc

import (
	"fmt"
	"math"
	"sort"

	"github.com/zclconf/go-cty/cty"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/cairn-dev/cairn/internal/value"
	psig "github.com/pulumi/pulumi/sdk/v3/go/common/resource/sig"
)

// Pulumi's property encoding on the wire (sdk/go/common/resource/properties.go and
// plugin/rpc.go): special values are objects whose psig.Key names what they are; unknowns are
// plain strings naming the expected type.
const (
	unknownString  = "04da6b54-80e4-46f7-96ec-b56ff0331ba9" // also the generic unknown
	unknownBool    = "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7"
	unknownNumber  = "3eeb2bf0-c639-47a8-9e75-3b44932eb421"
	unknownArray   = "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2"
	unknownObject  = "dd056dcd-154b-4c76-9bd3-c8f88648b5ff"
	unknownAsset   = "030794c1-ac77-496b-92df-f27374a8bd58"
	unknownArchive = "e48ece36-62e2-4504-bad9-02848725956a"
)

// Unknowns of list and object shape: cty has no "unknown something", so these stand for
// Pulumi's typed array and object sentinels and turn back into them.
var (
	unknownListType   = cty.List(cty.DynamicPseudoType)
	unknownObjectType = cty.Map(cty.DynamicPseudoType)
)

// fromStruct converts a property bag to a cty object (cty.EmptyObjectVal for nil). Secrets
// become values marked value.Sensitive, unknown sentinels unknown values, output values are
// flattened to their value (unknown when absent, marked when secret). Assets, archives and
// resource references stay objects with the signature key, so they travel back unchanged.
func fromStruct(s *structpb.Struct) (cty.Value, error) {
	if s == nil || len(s.Fields) == 0 {
		return cty.EmptyObjectVal, nil
	}
	attrs := make(map[string]cty.Value, len(s.Fields))
	for k, f := range s.Fields {
		v, err := fromPB(f)
		if err != nil {
			return cty.NilVal, fmt.Errorf("%s: %w", k, err)
		}
		attrs[k] = v
	}
	return cty.ObjectVal(attrs), nil
}

func fromPB(v *structpb.Value) (cty.Value, error) {
	switch k := v.GetKind().(type) {
	case nil, *structpb.Value_NullValue:
		return cty.NullVal(cty.DynamicPseudoType), nil
	case *structpb.Value_BoolValue:
		return cty.BoolVal(k.BoolValue), nil
	case *structpb.Value_NumberValue:
		if math.IsNaN(k.NumberValue) || math.IsInf(k.NumberValue, 0) {
			return cty.NilVal, fmt.Errorf("number %v cannot be represented", k.NumberValue)
		}
		return cty.NumberFloatVal(k.NumberValue), nil
	case *structpb.Value_StringValue:
		return fromString(k.StringValue), nil
	case *structpb.Value_ListValue:
		vals := k.ListValue.GetValues()
		if len(vals) == 0 {
			return cty.EmptyTupleVal, nil
		}
		out := make([]cty.Value, len(vals))
		for i, e := range vals {
			cv, err := fromPB(e)
			if err != nil {
				return cty.NilVal, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = cv
		}
		return cty.TupleVal(out), nil
	case *structpb.Value_StructValue:
		fields := k.StructValue.GetFields()
		if sig, ok := fields[psig.Key]; ok {
			switch sig.GetStringValue() {
			case psig.Secret:
				inner, err := fromPB(fields["value"])
				if err != nil {
					return cty.NilVal, err
				}
				return value.Secret(inner), nil
			case psig.OutputValue:
				return fromOutput(fields)
			}
			// assets, archives, resource references, byte strings: kept verbatim
		}
		return fromStruct(k.StructValue)
	default:
		return cty.NilVal, fmt.Errorf("unsupported protobuf value %T", k)
	}
}

func fromString(s string) cty.Value {
	switch s {
	case unknownString, unknownAsset, unknownArchive:
		return cty.UnknownVal(cty.DynamicPseudoType)
	case unknownBool:
		return cty.UnknownVal(cty.Bool)
	case unknownNumber:
		return cty.UnknownVal(cty.Number)
	case unknownArray:
		return cty.UnknownVal(unknownListType)
	case unknownObject:
		return cty.UnknownVal(unknownObjectType)
	}
	return cty.StringVal(s)
}

func fromOutput(fields map[string]*structpb.Value) (cty.Value, error) {
	v := cty.UnknownVal(cty.DynamicPseudoType)
	if inner, ok := fields["value"]; ok {
		var err error
		if v, err = fromPB(inner); err != nil {
			return cty.NilVal, err
		}
	}
	if fields["secret"].GetBoolValue() {
		v = value.Secret(v)
	}
	return v, nil
}

// encoder turns cty values into Pulumi properties under the protocol flags the provider
// negotiated.
type encoder struct {
	secrets     bool // the provider accepts secret objects; otherwise secrets travel plain
	preview     bool // unknowns are allowed
	byteStrings bool // the provider accepts byte-string objects (bytestrings.go)
}

// toStruct converts a cty object or map to a property bag; a null value is an empty bag.
func (e encoder) toStruct(v cty.Value) (*structpb.Struct, error) {
	v, marks := v.Unmark()
	if v == cty.NilVal || v.IsNull() {
		return &structpb.Struct{Fields: map[string]*structpb.Value{}}, nil
	}
	if !v.IsKnown() {
		return nil, fmt.Errorf("the properties are not known yet")
	}
	ty := v.Type()
	if !ty.IsObjectType() && !ty.IsMapType() {
		return nil, fmt.Errorf("properties must be an object, not %s", ty.FriendlyName())
	}
	fields := map[string]*structpb.Value{}
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		if _, secret := marks[value.Sensitive]; secret {
			ev = value.Secret(ev)
		}
		pv, err := e.toPB(ev)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.AsString(), err)
		}
		fields[k.AsString()] = pv
	}
	return &structpb.Struct{Fields: fields}, nil
}

func (e encoder) toPB(v cty.Value) (*structpb.Value, error) {
	v, marks := v.Unmark()
	if _, secret := marks[value.Sensitive]; secret && e.secrets {
		inner, err := e.toPB(v)
		if err != nil {
			return nil, err
		}
		return structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
			psig.Key: structpb.NewStringValue(psig.Secret), "value": inner}}), nil
	}
	if !v.IsKnown() {
		if !e.preview {
			return nil, fmt.Errorf("value is not known yet outside a preview")
		}
		return structpb.NewStringValue(unknownSentinel(v.Type())), nil
	}
	if v.IsNull() {
		return structpb.NewNullValue(), nil
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return structpb.NewStringValue(v.AsString()), nil
	case ty == cty.Bool:
		return structpb.NewBoolValue(v.True()), nil
	case ty == cty.Number:
		f, _ := v.AsBigFloat().Float64()
		if math.IsInf(f, 0) {
			return nil, fmt.Errorf("number %s is out of range", v.AsBigFloat().Text('g', 10))
		}
		return structpb.NewNumberValue(f), nil
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		var vals []*structpb.Value
		i := 0
		for it := v.ElementIterator(); it.Next(); i++ {
			_, ev := it.Element()
			pv, err := e.toPB(ev)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			vals = append(vals, pv)
		}
		return structpb.NewListValue(&structpb.ListValue{Values: vals}), nil
	case ty.IsObjectType() || ty.IsMapType():
		if b64, ok := isByteString(v); ok && !e.byteStrings {
			return byteStringText(b64)
		}
		s, err := e.toStruct(v)
		if err != nil {
			return nil, err
		}
		return structpb.NewStructValue(s), nil
	}
	return nil, fmt.Errorf("cannot send a value of type %s", ty.FriendlyName())
}

func unknownSentinel(ty cty.Type) string {
	switch {
	case ty == cty.Bool:
		return unknownBool
	case ty == cty.Number:
		return unknownNumber
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		return unknownArray
	case ty.IsMapType() || ty.IsObjectType():
		return unknownObject
	}
	return unknownString
}

// secretKeys lists the top-level keys of v that are (or hold) secrets: a provider that does not
// accept secrets gets them plain, and its outputs under these keys are marked again.
func secretKeys(v cty.Value) []string {
	v, _ = v.Unmark()
	if v == cty.NilVal || v.IsNull() || !v.IsKnown() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
		return nil
	}
	var keys []string
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		if ev.ContainsMarked() {
			keys = append(keys, k.AsString())
		}
	}
	sort.Strings(keys)
	return keys
}

// remark marks v's top-level keys in keys as secret.
func remark(v cty.Value, keys []string) cty.Value {
	if len(keys) == 0 || v.IsNull() || !v.IsKnown() || !v.Type().IsObjectType() {
		return v
	}
	attrs := v.AsValueMap()
	for _, k := range keys {
		if a, ok := attrs[k]; ok {
			attrs[k] = value.Secret(a)
		}
	}
	return cty.ObjectVal(attrs)
}
