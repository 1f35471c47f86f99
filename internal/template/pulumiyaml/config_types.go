package pulumiyaml

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/value"
)

// configType reads a declared config type: the program's (String, Number, Int/Integer,
// Bool/Boolean, Object, List<T>, any case, as pulumi-yaml's config.Parse) or the project
// schema's (string, integer, boolean, array, object). The result is lower case, lists as
// "list<string>"; "array" is a list of anything.
func configType(s string) (string, bool) {
	t := strings.ToLower(strings.TrimSpace(s))
	if inner, ok := strings.CutPrefix(t, "list<"); ok && strings.HasSuffix(inner, ">") {
		elem, ok := configType(strings.TrimSuffix(inner, ">"))
		if !ok || strings.HasPrefix(elem, "list<") || elem == "array" {
			return "", false
		}
		return "list<" + elem + ">", true
	}
	switch t {
	case "string", "number", "object", "array":
		return t, true
	case "int", "integer":
		return "integer", true
	case "bool", "boolean":
		return "boolean", true
	}
	return "", false
}

// configTypeNames is for messages.
const configTypeNames = "String, Number, Integer, Boolean, Object, List<String>, List<Number>, List<Integer>, List<Boolean>, List<Object> (or the project schema's string, integer, boolean, array, object)"

// itemsType reads a project schema's `items: {type: T}` into a list type.
func itemsType(elem string) string {
	if t, ok := configType(elem); ok && !strings.HasPrefix(t, "list<") && t != "array" {
		return "list<" + t + ">"
	}
	return "array"
}

// coerceText is the value of an undeclared config key, which Pulumi keeps as text: as the
// YAML runtime reads it (pulumi-yaml's server.go), an integer (but not "01"), a boolean, a
// number, JSON, or else the text itself.
func coerceText(s string) cty.Value {
	if len(s) > 1 && strings.HasPrefix(s, "0") && !strings.HasPrefix(s, "0.") {
		return cty.StringVal(s)
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return cty.NumberIntVal(i)
	}
	if b, err := strconv.ParseBool(s); err == nil {
		return cty.BoolVal(b)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return cty.NumberFloatVal(f)
	}
	if json.Valid([]byte(s)) {
		if v, err := value.FromJSON([]byte(s)); err == nil {
			return v
		}
	}
	return cty.StringVal(s)
}

// textAsString is the string a declared string config holds for text: the text, or the
// string it encodes as JSON (`"foo"`), which is how the YAML runtime reads a quoted value.
func textAsString(s string) string {
	if strings.HasPrefix(s, `"`) {
		var out string
		if json.Unmarshal([]byte(s), &out) == nil {
			return out
		}
	}
	return s
}

// convertList checks every element of a list config against its element type.
func convertList(v cty.Value, typ string) (cty.Value, string) {
	if !isList(v) {
		return cty.NilVal, "expected a list"
	}
	elem := strings.TrimSuffix(strings.TrimPrefix(typ, "list<"), ">")
	if v.LengthInt() == 0 {
		return cty.EmptyTupleVal, ""
	}
	var out []cty.Value
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		c, err := convert(stackValue{v: e}, elem)
		if elem == "string" && (e.IsNull() || e.Type() != cty.String) {
			err = "expected a string" // in a JSON list, 1 is not "1"
		}
		if err != "" {
			i, _ := k.AsBigFloat().Int64()
			return cty.NilVal, "element " + strconv.FormatInt(i, 10) + ": " + err
		}
		out = append(out, c)
	}
	return cty.TupleVal(out), ""
}
