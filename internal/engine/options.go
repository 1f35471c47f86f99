package engine

import (
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// secretOutputs marks the outputs res names in SecretOutputs as secrets, whatever the
// provider returned (Pulumi's additionalSecretOutputs): they are then stored sealed and
// shown redacted like every other secret.
func secretOutputs(res *template.Resource, outputs cty.Value) cty.Value {
	if len(res.SecretOutputs) == 0 || !outputs.Type().IsObjectType() || outputs.IsNull() || !outputs.IsKnown() {
		return outputs
	}
	attrs := outputs.AsValueMap()
	for _, k := range res.SecretOutputs {
		if v, ok := attrs[k]; ok {
			attrs[k] = v.Mark(value.Sensitive)
		}
	}
	return cty.ObjectVal(attrs)
}

// deleteTimeout bounds the provider's delete of the resource called name: its template's
// custom delete timeout, if the template still declares it.
func (r *run) deleteTimeout(name string) time.Duration {
	if r.tmpl == nil {
		return 0
	}
	if res := r.tmpl.Resource(name); res != nil {
		return res.Timeouts.Delete
	}
	return 0
}

// deletedWithStack says the resource called name goes with another resource that the stack's
// deletion deletes too (Pulumi's deletedWith), so its own delete is not sent.
func (r *run) deletedWithStack(name string) bool {
	if r.tmpl == nil {
		return false
	}
	res := r.tmpl.Resource(name)
	if res == nil || res.DeletedWith == "" {
		return false
	}
	_, held := r.prior[res.DeletedWith]
	return held
}
