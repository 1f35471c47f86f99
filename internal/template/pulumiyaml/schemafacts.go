package pulumiyaml

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// What a package schema says that changes how a program's values reach the plugin, applied
// as pulumi-yaml applies it (run.go, registerResource and evaluateBuiltinInvoke):
//   - an input property marked `secret` is sent secret, whatever the program wrote (top-level
//     properties only, as pulumi-yaml's IsResourcePropertySecret);
//   - an output property marked `secret` is an additional secret output;
//   - the paths to properties marked `replaceOnChanges` (nested through object types) join
//     the resource's replaceOnChanges option;
//   - a function whose `outputs` is not an object type returns its single value, not the
//     object the plugin answers with.

// schemaProperty is one property of a schema object, as much as the front end reads.
type schemaProperty struct {
	Type                 string          `json:"type"`
	Ref                  string          `json:"$ref"`
	Secret               bool            `json:"secret"`
	ReplaceOnChanges     bool            `json:"replaceOnChanges"`
	Items                *schemaProperty `json:"items"`
	AdditionalProperties *schemaProperty `json:"additionalProperties"`
}

// schemaObject is a resource, the provider or an object type of a schema.
type schemaObject struct {
	Properties      map[string]schemaProperty `json:"properties"`
	InputProperties map[string]schemaProperty `json:"inputProperties"`
}

// resourceFacts are a resource type's schema facts (or the provider's).
type resourceFacts struct {
	inputs           map[string]schemaProperty // typecheck.go
	secretInputs     map[string]bool
	secretOutputs    []string
	replaceOnChanges []string
}

// schemaDoc is the part of a package schema the front end decodes.
type schemaDoc struct {
	Resources map[string]schemaObject               `json:"resources"`
	Provider  *schemaObject                         `json:"provider"`
	Types     map[string]schemaObject               `json:"types"`
	Functions map[string]map[string]json.RawMessage `json:"functions"`
}

// factsOf reads the facts of one resource (or the provider) of doc.
func (doc *schemaDoc) factsOf(obj schemaObject) *resourceFacts {
	f := &resourceFacts{secretInputs: map[string]bool{}, inputs: obj.InputProperties}
	for name, prop := range obj.InputProperties {
		if prop.Secret {
			f.secretInputs[name] = true
		}
	}
	for _, name := range sortedKeys(obj.Properties) {
		prop := obj.Properties[name]
		if prop.Secret {
			f.secretOutputs = append(f.secretOutputs, name)
		}
		if prop.ReplaceOnChanges {
			f.replaceOnChanges = append(f.replaceOnChanges, name)
			continue
		}
		for _, sub := range doc.replaceOnChangesIn(prop, map[string]bool{}) {
			f.replaceOnChanges = append(f.replaceOnChanges, name+"."+sub)
		}
	}
	return f
}

// replaceOnChangesIn lists the paths below prop, an object type of this schema, to properties
// marked replaceOnChanges; seen holds the types on the way, so a recursive type ends.
func (doc *schemaDoc) replaceOnChangesIn(prop schemaProperty, seen map[string]bool) []string {
	tok, local := strings.CutPrefix(prop.Ref, "#/types/")
	if !local || seen[tok] {
		return nil
	}
	obj, ok := doc.Types[tok]
	if !ok {
		return nil
	}
	seen[tok] = true
	defer delete(seen, tok)
	var out []string
	for _, name := range sortedKeys(obj.Properties) {
		p := obj.Properties[name]
		if p.ReplaceOnChanges {
			out = append(out, name)
			continue
		}
		for _, sub := range doc.replaceOnChangesIn(p, seen) {
			out = append(out, name+"."+sub)
		}
	}
	return out
}

// scalarReturn says whether a function's `outputs` is a type other than an object type: a
// primitive, an array, a map, or a reference to a non-object type (Pulumi's ReturnType that
// is not a *schema.ObjectType). No outputs at all is not a scalar return.
func (doc *schemaDoc) scalarReturn(fn map[string]json.RawMessage) bool {
	raw, ok := fn["outputs"]
	if !ok {
		return false
	}
	var out map[string]json.RawMessage
	if json.Unmarshal(raw, &out) != nil || len(out) == 0 {
		return false
	}
	if _, isObject := out["properties"]; isObject {
		return false
	}
	var t schemaProperty
	if json.Unmarshal(raw, &t) != nil {
		return false
	}
	if tok, local := strings.CutPrefix(t.Ref, "#/types/"); local {
		obj, ok := doc.Types[tok]
		return ok && obj.Properties == nil // an enum or other non-object type
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// applySchema applies the facts of r's type (pkg's schema) to r, or marks r's invoke as
// returning a scalar.
func (p *parser) applySchema(r *template.Resource, t *packageTokens) {
	if r.Mode == template.Data {
		if inv := p.invokes[r.Name]; inv != nil && t.scalarFunctions[r.Type] {
			inv.scalar = true
		}
		return
	}
	f := t.resources[r.Type]
	if isProviderType(r.Type) {
		f = t.provider
	}
	if f == nil {
		return
	}
	if x, ok := r.Properties.(rootExpr); ok {
		p.typecheck(r, x.x, f.inputs)
	}
	for _, name := range f.secretOutputs {
		if !slices.Contains(r.SecretOutputs, name) {
			r.SecretOutputs = append(r.SecretOutputs, name)
		}
	}
	for _, path := range f.replaceOnChanges {
		if !slices.Contains(r.ReplaceOnChanges, path) {
			r.ReplaceOnChanges = append(r.ReplaceOnChanges, path)
		}
	}
	if len(f.secretInputs) > 0 {
		r.Properties = secretInputs{inner: r.Properties, secret: f.secretInputs}
	}
}

// secretInputs marks the top-level properties the schema calls secret as secrets, so that
// Check, state, outputs and events carry them as such.
type secretInputs struct {
	inner  template.Expr
	secret map[string]bool
}

func (s secretInputs) Eval(sc template.Scope) (cty.Value, diag.Diagnostics) {
	v, ds := s.inner.Eval(sc)
	return markSecretAttrs(v, s.secret), ds
}

// markSecretAttrs marks the attributes of object v named in secret.
func markSecretAttrs(v cty.Value, secret map[string]bool) cty.Value {
	plain, marks := v.Unmark()
	if plain.IsNull() || !plain.IsKnown() || !(plain.Type().IsObjectType() || plain.Type().IsMapType()) {
		return v
	}
	attrs := plain.AsValueMap()
	changed := false
	for name, a := range attrs {
		if secret[name] && !a.IsNull() {
			attrs[name], changed = value.Secret(a), true
		}
	}
	if !changed {
		return v
	}
	if plain.Type().IsMapType() {
		return cty.MapVal(attrs).WithMarks(marks)
	}
	return cty.ObjectVal(attrs).WithMarks(marks)
}
