package pulumiyaml

import (
	"math"
	"strconv"
	"strings"

	"github.com/pulumi/pulumi-yaml/pkg/pulumiyaml/syntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// configDecl is one declared config key: `key: default` or `key: {type, default, secret}`.
type configDecl struct {
	name   string // as the program refers to it
	key    string // as the stack config sets it: name, unless the declaration's name: says another
	typ    string // string, number, integer, boolean, object, array or list<T> (see configType)
	def    syntax.Node
	secret bool
	at     where
}

func parseConfigDecls(obj syntax.Node, path string) ([]*configDecl, diag.Diagnostics) {
	o, ok := obj.(*syntax.ObjectNode)
	if !ok {
		return nil, diag.Diagnostics{diag.Errorf(rangeOf(obj), path, "config must be an object")}
	}
	var out []*configDecl
	var ds diag.Diagnostics
	for _, e := range entries(o, path) {
		d := &configDecl{name: e.key, key: e.key, at: e.at}
		items := ""
		spec, isSpec := e.value.(*syntax.ObjectNode)
		if !isSpec {
			d.def = e.value // a bare default: its type is the default's
		}
		for _, f := range entries(spec, e.at.path) {
			switch f.key {
			case "type":
				s, ok := f.value.(*syntax.StringNode)
				t, known := "", false
				if ok {
					t, known = configType(s.Value())
				}
				if !known {
					ds = append(ds, diag.Errorf(rangeOf(f.value), f.at.path, "config type must be one of %s", configTypeNames))
					continue
				}
				d.typ = t
			case "default":
				d.def = f.value
			case "secret":
				b, ok := f.value.(*syntax.BooleanNode)
				if !ok {
					ds = append(ds, diag.Errorf(rangeOf(f.value), f.at.path, "secret must be true or false"))
					continue
				}
				d.secret = b.Value()
			case "items":
				if it, ok := f.value.(*syntax.ObjectNode); ok {
					for _, g := range entries(it, f.at.path) {
						if s, ok := g.value.(*syntax.StringNode); ok && g.key == "type" {
							items = s.Value()
						}
					}
				}
			case "name": // the key in the stack's config; the program still says ${<name as declared>}
				n, ok := f.value.(*syntax.StringNode)
				if !ok || n.Value() == "" {
					ds = append(ds, diag.Errorf(rangeOf(f.value), f.at.path, "name must be the config key to read"))
					continue
				}
				d.key = n.Value()
			case "description":
			default:
				ds = append(ds, diag.Errorf(f.at.rng, f.at.path, "unknown config property %q (expected type, default, secret, items, name or description)", f.key))
			}
		}
		if d.typ == "array" && items != "" {
			d.typ = itemsType(items)
		}
		if d.typ == "" && d.def != nil {
			d.typ = typeOf(plain(d.def))
		}
		if d.typ == "" {
			ds = append(ds, diag.Errorf(e.at.rng, e.at.path, "config %q needs a type or a default", e.key))
		}
		out = append(out, d)
	}
	return out, ds
}

func typeOf(v cty.Value) string {
	if v.IsNull() {
		return ""
	}
	switch ty := v.Type(); {
	case ty == cty.Bool:
		return "boolean"
	case ty == cty.Number:
		if v.AsBigFloat().IsInt() {
			return "integer"
		}
		return "number"
	case ty.IsTupleType() || ty.IsListType():
		return "array"
	case ty.IsObjectType() || ty.IsMapType():
		return "object"
	}
	return "string"
}

// stackValue is a value from Pulumi.<stack>.yaml or an override.
type stackValue struct {
	v      cty.Value // plain, or a string to convert
	text   bool      // v came as text (an override) and is converted per the declared type
	secret bool
	rng    diag.Range
}

// stackConfig reads the `config:` of Pulumi.<stack>.yaml. Keys of the project may be written
// `<project>:key` or `key`; keys of other namespaces (provider configuration such as
// `aws:region`) are kept under their full name.
func stackConfig(obj *syntax.ObjectNode, project, file string) (map[string]stackValue, diag.Diagnostics) {
	out := map[string]stackValue{}
	var ds diag.Diagnostics
	salt := ""
	for _, top := range entries(obj, "") {
		if s, ok := top.value.(*syntax.StringNode); ok && top.key == "encryptionsalt" {
			salt = s.Value()
		}
	}
	secure := secureValues{salt: salt}
	for _, top := range entries(obj, "") {
		if top.key != "config" {
			continue // secretsprovider, encryptedkey, environment: nothing to bind
		}
		cfg, ok := top.value.(*syntax.ObjectNode)
		if !ok {
			ds = append(ds, diag.Errorf(rangeOf(top.value), "config", "config must be an object"))
			continue
		}
		for _, e := range entries(cfg, "config") {
			if sec, ok := e.value.(*syntax.ObjectNode); ok && sec.Len() == 1 && sec.Index(0).Key != nil && sec.Index(0).Key.Value() == "secure" {
				text, err := secure.decrypt(sec.Index(0).Value)
				if err != nil {
					ds = append(ds, diag.Errorf(e.at.rng, e.at.path, "%s: the secure value of %s: %v", file, e.key, err))
					continue
				}
				out[configKey(e.key, project)] = stackValue{v: cty.StringVal(text), text: true, secret: true, rng: e.at.rng}
				continue
			}
			_, isText := e.value.(*syntax.StringNode)
			out[configKey(e.key, project)] = stackValue{v: plain(e.value), text: isText, rng: e.at.rng}
		}
	}
	return out, ds
}

func configKey(key, project string) string {
	if rest, ok := strings.CutPrefix(key, project+":"); ok {
		return rest
	}
	return key
}

// bindConfig gives every declared key its value: an override, else the stack file's, else the
// default. Undeclared keys of the stack file become parameters too, typed as written.
func bindConfig(decls []*configDecl, given map[string]stackValue, stackFile string) ([]*template.Parameter, map[string]cty.Value, diag.Diagnostics) {
	var params []*template.Parameter
	vals := map[string]cty.Value{}
	var ds diag.Diagnostics
	declared := map[string]bool{}
	for _, d := range decls {
		if declared[d.key] {
			ds = append(ds, diag.Errorf(d.at.rng, d.at.path, "config %q is declared twice", d.key))
			continue
		}
		declared[d.key] = true
		sv, ok := given[d.key]
		if !ok && d.def != nil {
			sv, ok = stackValue{v: plain(d.def), rng: rangeOf(d.def)}, true
		}
		if !ok {
			ds = append(ds, diag.Errorf(d.at.rng, d.at.path, "config %q has no value: set it in %s or pass it", d.key, stackFile))
			continue
		}
		v, err := convert(sv, d.typ)
		secret := d.secret || sv.secret
		if err != "" {
			if secret { // the reason may quote the value
				err = "the secret value is not a " + d.typ
			}
			ds = append(ds, diag.Errorf(sv.rng, d.at.path, "config %q: %s", d.key, err))
			continue
		}
		params = append(params, param(d.key, d.typ, v, secret, d.at.rng))
		if secret {
			v = value.Secret(v)
		}
		vals[d.name] = v
	}
	for k, sv := range given {
		if declared[k] {
			continue
		}
		v := sv.v
		if sv.text {
			v = coerceText(v.AsString())
		}
		params = append(params, param(k, typeOf(v), v, sv.secret, sv.rng))
		if sv.secret {
			v = value.Secret(v)
		}
		vals[k] = v
	}
	return params, vals, ds
}

func param(name, typ string, v cty.Value, secret bool, rng diag.Range) *template.Parameter {
	p := &template.Parameter{Name: name, Type: typ, NoEcho: secret, Value: v, Range: rng}
	if secret {
		p.Value = value.Secret(v)
	}
	if s, err := embed(v); err == nil {
		p.Text, p.HasText = s, true
	}
	return p
}

// convert checks a value against a declared type; text (an override, or a scalar in the
// stack file, where Pulumi keeps every value as a string) is parsed.
func convert(sv stackValue, typ string) (cty.Value, string) {
	v := sv.v
	if v.IsNull() {
		return cty.NilVal, "no value"
	}
	text, isText := "", v.Type() == cty.String
	if isText {
		text = v.AsString()
	}
	switch typ {
	case "string":
		if isText {
			return cty.StringVal(textAsString(text)), ""
		}
		s, err := embed(v)
		if err != nil || !v.Type().IsPrimitiveType() {
			return cty.NilVal, "expected a string"
		}
		return cty.StringVal(s), ""
	case "number":
		if isText {
			f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return cty.NilVal, "expected a number, got " + strconv.Quote(text)
			}
			return cty.NumberFloatVal(f), ""
		}
		if v.Type() == cty.Number {
			return v, ""
		}
		return cty.NilVal, "expected a number"
	case "integer":
		if isText {
			i, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
			if err != nil {
				return cty.NilVal, "expected an integer, got " + strconv.Quote(text)
			}
			return cty.NumberIntVal(i), ""
		}
		if v.Type() == cty.Number && v.AsBigFloat().IsInt() {
			return v, ""
		}
		return cty.NilVal, "expected an integer"
	case "boolean":
		if isText {
			b, err := strconv.ParseBool(strings.TrimSpace(text))
			if err != nil {
				return cty.NilVal, "expected true or false, got " + strconv.Quote(text)
			}
			return cty.BoolVal(b), ""
		}
		if v.Type() == cty.Bool {
			return v, ""
		}
		return cty.NilVal, "expected true or false"
	case "array", "object":
		if isText {
			j, err := value.FromJSON([]byte(text))
			if err != nil {
				return cty.NilVal, "expected JSON: " + err.Error()
			}
			v = j
		}
		if typeOf(v) != typ {
			return cty.NilVal, "expected an " + typ
		}
		return v, ""
	}
	if strings.HasPrefix(typ, "list<") {
		if isText {
			j, err := value.FromJSON([]byte(text))
			if err != nil {
				return cty.NilVal, "expected a JSON list: " + err.Error()
			}
			v = j
		}
		return convertList(v, typ)
	}
	return cty.NilVal, "unknown type " + typ
}
