package pulumiyaml

import (
	"fmt"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// typecheck refuses a literal of the program that the schema's input type cannot take, as
// pulumi-yaml's type checker refuses it before anything runs (analyser.go, isAssignable): a
// string where the schema says boolean, number or integer (even "true" or "3": pulumi-yaml
// does not parse it), a number or a boolean where it says the other. A number or boolean
// where it says string is taken, as pulumi-yaml takes it. Only literals are judged, through
// lists and maps: a value computed at run time is the plugin's to check.
func (p *parser) typecheck(r *template.Resource, props expr, inputs map[string]schemaProperty) {
	obj, ok := props.(objectExpr)
	if !ok || len(inputs) == 0 {
		return
	}
	for i, key := range obj.keys {
		if t, ok := inputs[key]; ok {
			p.typecheckValue(r, key, obj.elems[i], t)
		}
	}
}

func (p *parser) typecheckValue(r *template.Resource, path string, x expr, t schemaProperty) {
	switch x := x.(type) {
	case literal:
		from := literalType(x.v)
		if from == "" || assignable(from, t.Type) {
			return
		}
		p.ds = append(p.ds, diag.Errorf(r.PropertyRange(path), "resources."+r.Name+".properties."+path,
			"Cannot assign type '%s' to type '%s'", from, t.Type))
	case listExpr:
		if t.Type == "array" && t.Items != nil {
			for i, e := range x.elems {
				p.typecheckValue(r, fmt.Sprintf("%s[%d]", path, i), e, *t.Items)
			}
		}
	case objectExpr:
		if t.Type == "object" && t.AdditionalProperties != nil {
			for i, key := range x.keys {
				p.typecheckValue(r, path+"."+key, x.elems[i], *t.AdditionalProperties)
			}
		}
	}
}

// literalType is the schema type of a literal value: "" for null and anything else.
func literalType(v cty.Value) string {
	if v.IsNull() || !v.IsKnown() {
		return ""
	}
	switch v.Type() {
	case cty.String:
		return "string"
	case cty.Bool:
		return "boolean"
	case cty.Number:
		if v.AsBigFloat().IsInt() {
			return "integer"
		}
		return "number"
	}
	return ""
}

// assignable is pulumi-yaml's isAssignable for primitive types; a type the front end does not
// judge (a reference, any, an asset, none) takes anything.
func assignable(from, to string) bool {
	switch to {
	case "boolean":
		return from == "boolean"
	case "number", "integer":
		return from == "number" || from == "integer"
	case "string":
		return true
	}
	return true
}
