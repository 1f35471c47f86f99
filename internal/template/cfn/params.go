package cfn

import (
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

var paramKeys = map[string]bool{"Type": true, "Default": true, "AllowedValues": true, "AllowedPattern": true,
	"MinLength": true, "MaxLength": true, "MinValue": true, "MaxValue": true, "NoEcho": true, "Description": true,
	"ConstraintDescription": true, "Label": true, "AssociationProperty": true, "AssociationPropertyMetadata": true,
	"Confirm": true, "TextArea": true, "Required": true}

// parameters binds the declared parameters to the given values or their defaults and checks
// their constraints.
func (p *parser) parameters(sec *node) []*template.Parameter {
	if sec == nil {
		return nil
	}
	if sec.kind != kMap {
		p.errf(sec, "Parameters must be a map")
		return nil
	}
	var out []*template.Parameter
	for i, name := range sec.keys {
		pn := sec.vals[i]
		at := &node{rng: sec.keyRange(i), path: pn.path}
		if pn.kind != kMap {
			p.errf(pn, "parameter %s must be a map with a Type", name)
			continue
		}
		for j, k := range pn.keys {
			if !paramKeys[k] {
				p.errf(pn.vals[j], "unknown parameter attribute %s", k)
			}
		}
		typ, ok := pn.get("Type").str()
		if !ok {
			p.errf(pn, "parameter %s needs a Type", name)
			continue
		}
		prm := &template.Parameter{Name: name, Type: typ, Range: at.rng}
		prm.Description, _ = pn.get("Description").str()
		if ne, ok := pn.get("NoEcho").str(); ok && strings.EqualFold(ne, "true") {
			prm.NoEcho = true
		}
		raw, given := p.opts.Parameters[name]
		if !given {
			raw, given = pn.get("Default").str()
			if d := pn.get("Default"); d != nil && d.kind == kList { // ROS and YAML authors write list defaults as lists
				var parts []string
				for _, e := range d.vals {
					s, _ := e.str()
					parts = append(parts, s)
				}
				raw, given = strings.Join(parts, ","), true
			}
		}
		switch {
		case given:
			prm.Value = p.paramValue(pn, at, name, typ, raw)
		case p.opts.Validate:
			prm.Value = cty.DynamicVal
		default:
			p.errf(at, "parameter %s has no value: give one with --parameter %s=VALUE or a Default", name, name)
			prm.Value = cty.DynamicVal
		}
		if prm.NoEcho {
			prm.Value = value.Secret(prm.Value)
		}
		p.b.params[name] = prm.Value
		out = append(out, prm)
	}
	for name := range p.opts.Parameters {
		if _, ok := p.b.params[name]; !ok {
			p.errf(sec, "parameter %s is given but the template does not declare it", name)
		}
	}
	return out
}

// paramValue converts and checks one parameter's value. The message never quotes a value,
// which may be a secret.
func (p *parser) paramValue(pn, at *node, name, typ, raw string) cty.Value {
	fail := func(format string, args ...any) cty.Value {
		msg := "parameter " + name + ": "
		if cd, ok := pn.get("ConstraintDescription").str(); ok {
			msg += cd + " ("
			args = append(args, ")")
			format += "%s"
		}
		p.errf(at, msg+format, args...)
		return cty.DynamicVal
	}
	ros := p.dialect == template.ROS
	isList := typ == "CommaDelimitedList" || strings.HasPrefix(typ, "List<")
	var items []string
	if isList {
		for _, s := range strings.Split(raw, ",") {
			items = append(items, strings.TrimSpace(s))
		}
		if raw == "" {
			items = nil
		}
	} else {
		items = []string{raw}
	}
	numeric := typ == "Number" || typ == "List<Number>"
	for _, it := range items {
		if numeric {
			if _, _, err := big.ParseFloat(it, 10, 512, big.ToNearestEven); err != nil {
				return fail("must be a number")
			}
		}
		if errMsg := p.constraints(pn, it, numeric); errMsg != "" {
			return fail("%s", errMsg)
		}
	}
	switch {
	case isList:
		if len(items) == 0 {
			return cty.EmptyTupleVal
		}
		vals := make([]cty.Value, len(items))
		for i, it := range items {
			vals[i] = cty.StringVal(it)
		}
		return cty.TupleVal(vals)
	case ros && typ == "Number":
		f, _, _ := big.ParseFloat(raw, 10, 512, big.ToNearestEven)
		return cty.NumberVal(f)
	case ros && typ == "Boolean":
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return fail("must be true or false")
		}
		return cty.BoolVal(b)
	case ros && typ == "Json":
		v, err := jsonValue(raw)
		if err != nil {
			return fail("must be JSON: %s", err)
		}
		return v
	}
	return cty.StringVal(raw)
}

// constraints checks AllowedValues, AllowedPattern, lengths and bounds; it returns what is
// wrong, or "".
func (p *parser) constraints(pn *node, v string, numeric bool) string {
	if av := pn.get("AllowedValues"); av != nil && av.kind == kList {
		var allowed []string
		for _, a := range av.vals {
			s, _ := a.str()
			allowed = append(allowed, s)
		}
		found := false
		for _, a := range allowed {
			found = found || a == v
		}
		if !found {
			return "must be one of the AllowedValues [" + strings.Join(allowed, ", ") + "]"
		}
	}
	if pat, ok := pn.get("AllowedPattern").str(); ok {
		re, err := regexp.Compile("^(?:" + pat + ")$")
		if err != nil {
			p.errf(pn.get("AllowedPattern"), "invalid AllowedPattern: %s", err)
		} else if !re.MatchString(v) {
			return "must match the AllowedPattern " + pat
		}
	}
	bound := func(key string, check func(float64) bool, what string) string {
		if s, ok := pn.get(key).str(); ok {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				p.errf(pn.get(key), "%s must be a number", key)
			} else if !check(f) {
				return what + " " + s
			}
		}
		return ""
	}
	n := float64(len([]rune(v)))
	for _, c := range []string{
		bound("MinLength", func(f float64) bool { return n >= f }, "must be at least as long as MinLength"),
		bound("MaxLength", func(f float64) bool { return n <= f }, "must be at most as long as MaxLength"),
	} {
		if c != "" {
			return c
		}
	}
	if numeric {
		x, _ := strconv.ParseFloat(v, 64)
		for _, c := range []string{
			bound("MinValue", func(f float64) bool { return x >= f }, "must be at least MinValue"),
			bound("MaxValue", func(f float64) bool { return x <= f }, "must be at most MaxValue"),
		} {
			if c != "" {
				return c
			}
		}
	}
	return ""
}
