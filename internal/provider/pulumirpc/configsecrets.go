package pulumirpc

import (
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/value"
)

// Provider configuration travels as Pulumi's engine sends it (resource/plugin/provider_plugin.go):
// CheckConfig gets the configuration with its secrets plain (the plugin has not said yet
// whether it takes secret objects), the secrets of what was sent are marked again on the
// checked configuration it returns, and Configure gets that checked configuration with its
// secrets as secret objects.

// configEncoder encodes CheckConfig's olds and news: secrets plain.
func configEncoder(preview bool) encoder { return encoder{secrets: false, preview: preview} }

// annotateSecrets marks in outs what was secret in ins, key by key: objects on both sides are
// walked, any other value of outs is marked whole when its counterpart in ins holds a secret
// (Pulumi's annotateSecrets).
func annotateSecrets(outs, ins cty.Value) cty.Value {
	outPlain, outMarks := outs.Unmark()
	inPlain, _ := ins.Unmark()
	if !isKnownObject(outPlain) || !isKnownObject(inPlain) {
		return outs
	}
	attrs := outPlain.AsValueMap()
	if len(attrs) == 0 {
		return outs
	}
	inAttrs := inPlain.AsValueMap()
	for k, out := range attrs {
		in, ok := inAttrs[k]
		if !ok {
			continue
		}
		outV, _ := out.Unmark()
		inV, inMarks := in.Unmark()
		switch {
		case isKnownObject(outV) && isKnownObject(inV) && len(inMarks) == 0:
			attrs[k] = annotateSecrets(out, in)
		case !value.IsSecret(out) && value.IsSecret(in):
			attrs[k] = value.Secret(out)
		}
	}
	if outPlain.Type().IsMapType() {
		return cty.MapVal(attrs).WithMarks(outMarks)
	}
	return cty.ObjectVal(attrs).WithMarks(outMarks)
}

func isKnownObject(v cty.Value) bool {
	return v != cty.NilVal && v.IsKnown() && !v.IsNull() && (v.Type().IsObjectType() || v.Type().IsMapType())
}
