package cfn

import (
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

var paramKeys = map[string]bool{"Type": true, "Default": true, "AllowedValues": true, "AllowedPattern": true,
	"MinLength": true, "MaxLength": true, "MinValue": true, "MaxValue": true, "NoEcho": true, "Description": true,
	"ConstraintDescription": true,
	// ROS console hints, accepted and ignored.
	"Label": true, "AssociationProperty": true, "AssociationPropertyMetadata": true, "Confirm": true,
	"TextArea": true, "Required": true, "Placeholder": true}

// paramKind is how a parameter's text becomes a value.
type paramKind int

const (
	pString paramKind = iota
	pNumber
	pList // CommaDelimitedList and List<...>: a list of strings
	pNumberList
	pBool // ROS
	pJSON // ROS
)

// paramType classifies a declared Type; ok is false for types cairn does not support.
func paramType(d template.Dialect, typ string) (k paramKind, ok bool) {
	ros := d == template.ROS
	switch {
	case typ == "String":
		return pString, true
	case typ == "Number":
		return pNumber, true
	case typ == "CommaDelimitedList":
		return pList, true
	case typ == "List<Number>":
		return pNumberList, true
	case ros && typ == "Boolean":
		return pBool, true
	case ros && typ == "Json":
		return pJSON, true
	case strings.HasPrefix(typ, "AWS::SSM::Parameter::"), strings.HasPrefix(typ, "ALIYUN::OOS::"):
		return 0, false // the value lives in a parameter store cairn cannot read
	case strings.HasPrefix(typ, "List<AWS::") && strings.HasSuffix(typ, ">"):
		return pList, true
	case strings.HasPrefix(typ, "AWS::"):
		return pString, true // such as AWS::EC2::KeyPair::KeyName: not checked against the cloud
	}
	return 0, false
}

func typesHelp(d template.Dialect) string {
	if d == template.ROS {
		return "String, Number, CommaDelimitedList, List<Number>, Boolean or Json"
	}
	return "String, Number, CommaDelimitedList, List<Number>, or an AWS-specific type such as AWS::EC2::KeyPair::KeyName"
}

// parameters binds the declared parameters to the given values or their defaults and checks
// their constraints.
func (p *parser) parameters(sec *node) []*template.Parameter {
	var out []*template.Parameter
	switch {
	case sec == nil:
	case sec.kind != kMap:
		p.errf(sec, "Parameters must be a map")
	default:
		for i, name := range sec.keys {
			if prm := p.parameter(name, sec.keyRange(i), sec.vals[i]); prm != nil {
				out = append(out, prm)
			}
		}
	}
	var extra []string
	for name := range p.opts.Parameters {
		if sec.index(name) < 0 {
			extra = append(extra, name)
		}
	}
	slices.Sort(extra)
	for _, name := range extra {
		rng, path := diag.Range{Filename: p.file}, "Parameters"
		if sec != nil {
			rng = sec.rng
		}
		p.diags = p.diags.Append(diag.Errorf(rng, path, "parameter %s is given but the template does not declare it", name))
	}
	return out
}

func (p *parser) parameter(name string, rng diag.Range, pn *node) *template.Parameter {
	at := &node{rng: rng, place: pn.place}
	p.logicalID(name, rng, pn.path())
	if pn.kind != kMap {
		p.errf(at, "parameter %s must be a map with a Type", name)
		return nil
	}
	for j, k := range pn.keys {
		if !paramKeys[k] {
			p.diags = p.diags.Append(diag.Errorf(pn.keyRange(j), pn.vals[j].path(), "unknown parameter attribute %s", k))
		}
	}
	tn := pn.get("Type")
	if tn == nil {
		p.errf(at, "parameter %s needs a Type", name)
		return nil
	}
	typ, _ := tn.str()
	kind, ok := paramType(p.b.dialect, typ)
	if !ok {
		p.errf(tn, "parameter %s: unsupported Type %q: use %s", name, typ, typesHelp(p.b.dialect))
		return nil
	}
	prm := &template.Parameter{Name: name, Type: typ, Range: rng}
	if d := pn.get("Description"); d != nil {
		prm.Description = p.text(d, "Description")
	}
	if ne, ok := pn.get("NoEcho").str(); ok && strings.EqualFold(ne, "true") {
		prm.NoEcho = true
	}
	p.checkConstraints(pn)
	def := pn.get("Default")
	raw, given := p.opts.Parameters[name]
	if given && raw == "" && def != nil {
		given = false // --parameter K= takes the Default, whatever the last deploy had
	} else if !given {
		raw, given = p.opts.Previous[name] // kept from the last deploy (UsePreviousValue)
	}
	prm.Text, prm.HasText = raw, given
	switch {
	case given:
		prm.Value = p.paramValue(pn, at, kind, raw)
	case def != nil && kind == pJSON && (def.kind == kMap || def.kind == kList):
		// ROS writes a Json default as the value itself.
		ev := p.b.evaluator(p.bud, nil)
		prm.Value = ev.eval(def)
		p.diags = p.diags.Append(ev.diags)
		if b, err := value.ToJSON(prm.Value); err == nil && prm.Value.IsWhollyKnown() {
			prm.Text, prm.HasText = string(b), true
		}
	case def != nil && def.kind == kList:
		// A list default written as a list rather than as "a,b".
		var parts []string
		for _, e := range def.vals {
			s, ok := e.str()
			if !ok {
				p.errf(e, "the Default of a list parameter must be a list of strings")
			}
			parts = append(parts, s)
		}
		prm.Text, prm.HasText = strings.Join(parts, ","), true
		prm.Value = p.paramValue(pn, at, kind, prm.Text)
	case def != nil:
		s, ok := def.str()
		if !ok {
			p.errf(def, "the Default of parameter %s must be a string", name)
		}
		prm.Text, prm.HasText = s, true
		prm.Value = p.paramValue(pn, at, kind, s)
	case p.opts.Validate:
		prm.Value = unknownOf(p.b.dialect, kind)
	default:
		p.errf(at, "parameter %s has no value: give one with --parameter %s=VALUE or a Default", name, name)
		prm.Value = unknownOf(p.b.dialect, kind)
	}
	if prm.NoEcho {
		prm.Value = value.Secret(prm.Value)
	}
	p.b.params[name] = prm.Value
	return prm
}

// unknownOf is the value of a parameter that has none yet.
func unknownOf(d template.Dialect, k paramKind) cty.Value {
	switch {
	case k == pString, d == template.CloudFormation && k == pNumber:
		return cty.UnknownVal(cty.String)
	case k == pNumber:
		return cty.UnknownVal(cty.Number)
	case k == pBool:
		return cty.UnknownVal(cty.Bool)
	}
	return cty.DynamicVal
}

// checkConstraints checks the constraint attributes themselves.
func (p *parser) checkConstraints(pn *node) {
	if av := pn.get("AllowedValues"); av != nil && av.kind != kList {
		p.errf(av, "AllowedValues must be a list")
	}
	if n := pn.get("AllowedPattern"); n != nil {
		if s, ok := n.str(); !ok {
			p.errf(n, "AllowedPattern must be a string")
		} else if _, err := regexp.Compile(s); err != nil {
			p.errf(n, "invalid AllowedPattern: %s", err)
		}
	}
	for _, k := range []string{"MinLength", "MaxLength", "MinValue", "MaxValue"} {
		if n := pn.get(k); n != nil {
			if s, _ := n.str(); !isNumber(s) {
				p.errf(n, "%s must be a number", k)
			}
		}
	}
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil
}

// paramValue converts and checks one parameter's text. Messages never quote the value,
// which may be a secret.
func (p *parser) paramValue(pn, at *node, kind paramKind, raw string) cty.Value {
	name := pn.key
	fail := func(msg string) cty.Value {
		if cd, ok := pn.get("ConstraintDescription").str(); ok && cd != "" {
			msg = cd + " (" + msg + ")"
		}
		p.errf(at, "parameter %s: %s", name, msg)
		return unknownOf(p.b.dialect, kind)
	}
	items := []string{raw}
	if kind == pList || kind == pNumberList {
		items = nil
		if raw != "" {
			for _, s := range strings.Split(raw, ",") {
				items = append(items, strings.TrimSpace(s))
			}
		}
	}
	numeric := kind == pNumber || kind == pNumberList
	constraint := constraints(pn, numeric)
	for _, it := range items {
		if numeric && !isNumber(it) {
			return fail("must be a number")
		}
		if msg := constraint(it); msg != "" {
			return fail(msg)
		}
	}
	ros := p.b.dialect == template.ROS
	switch {
	case kind == pList || kind == pNumberList:
		if len(items) == 0 {
			return cty.EmptyTupleVal
		}
		vals := make([]cty.Value, len(items))
		for i, it := range items {
			vals[i] = cty.StringVal(it)
		}
		return cty.TupleVal(vals)
	case ros && kind == pNumber:
		f, _, _ := big.ParseFloat(strings.TrimSpace(raw), 10, 512, big.ToNearestEven)
		if !value.NumberInRange(f) {
			return fail("must be a number of at most about 1e330 in magnitude, and not nearer 0 than 1e-330")
		}
		return cty.NumberVal(f)
	case kind == pBool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return fail("must be true or false")
		}
		return cty.BoolVal(b)
	case kind == pJSON:
		if depth, _, _ := budget.BracketDepth([]byte(raw), -1); p.bud.Depth(depth) != nil {
			return fail("its JSON value " + p.bud.Depth(depth).Error())
		}
		v, err := value.FromJSON([]byte(raw))
		if err != nil {
			return fail("must be JSON")
		}
		return v
	}
	return cty.StringVal(raw)
}

// constraints returns the check of AllowedValues, AllowedPattern, MinLength/MaxLength and,
// for numbers, MinValue/MaxValue: it returns what is wrong with a value, naming the
// constraint, or "". The constraints are read and compiled once, however many items a list
// parameter has.
func constraints(pn *node, numeric bool) func(v string) string {
	var allowed []string
	var allowedSet map[string]bool
	if av := pn.get("AllowedValues"); av != nil && av.kind == kList {
		allowedSet = map[string]bool{}
		for _, a := range av.vals {
			s, _ := a.str()
			allowed = append(allowed, s)
			allowedSet[s] = true
		}
	}
	pat, hasPat := pn.get("AllowedPattern").str()
	var re *regexp.Regexp
	if hasPat {
		re, _ = regexp.Compile("^(?:" + pat + ")$")
	}
	type check struct {
		applies bool
		limit   string
		ok      func(n, x, limit float64) bool
		msg     string
	}
	var checks []check
	for _, c := range []check{
		{applies: !numeric, limit: "MinLength", ok: func(n, _, l float64) bool { return n >= l }, msg: "must be at least MinLength %s characters long"},
		{applies: !numeric, limit: "MaxLength", ok: func(n, _, l float64) bool { return n <= l }, msg: "must be at most MaxLength %s characters long"},
		{applies: numeric, limit: "MinValue", ok: func(_, x, l float64) bool { return x >= l }, msg: "must be at least MinValue %s"},
		{applies: numeric, limit: "MaxValue", ok: func(_, x, l float64) bool { return x <= l }, msg: "must be at most MaxValue %s"},
	} {
		if s, ok := pn.get(c.limit).str(); ok && c.applies && isNumber(s) {
			c.limit = s
			checks = append(checks, c)
		}
	}
	return func(v string) string {
		if allowedSet != nil && !allowedSet[v] {
			return "must be one of the AllowedValues [" + strings.Join(allowed, ", ") + "]"
		}
		if re != nil && !re.MatchString(v) {
			return "must match the AllowedPattern " + pat
		}
		n := float64(utf8.RuneCountInString(v))
		x, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
		for _, c := range checks {
			if limit, _ := strconv.ParseFloat(strings.TrimSpace(c.limit), 64); !c.ok(n, x, limit) {
				return strings.Replace(c.msg, "%s", c.limit, 1)
			}
		}
		return ""
	}
}
