package cfn

import (
	"cmp"
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// Options bind a template to a stack.
type Options struct {
	Parameters map[string]string // values given by the user (--parameter K=V), all strings as in CloudFormation
	// Previous holds the values the stack's last deploy bound (Parameter.Text), which a
	// redeploy keeps as `aws cloudformation deploy` does (UsePreviousValue): a declared
	// parameter not in Parameters takes its previous value before its Default. A parameter
	// given empty (--parameter K=) takes its Default instead, or the empty string when it has
	// none. Entries the template no longer declares are dropped.
	Previous map[string]string
	// Pseudo parameters. AWS::Partition derives from Region: "aws-cn" in cn-* regions, else "aws".
	StackName, StackID, Region, AccountID string
	// Validate makes a parameter with neither value nor Default an unknown value instead of an
	// error, so a template can be checked without its parameter values.
	Validate bool
	// Context carries the request's budget (see internal/budget): the nesting depth, YAML alias
	// expansion, elements and bytes an expression may build, and time. Nil means
	// context.Background(), whose budget has the default limits. Expressions evaluated after
	// Parse keep its limits but not its deadline or cancellation.
	Context context.Context
}

// Detect reports the template's dialect from its top-level keys: ROSTemplateFormatVersion
// means ROS, AWSTemplateFormatVersion or Resources CloudFormation. It reports false when src
// is not a CloudFormation or ROS template.
func Detect(src []byte) (template.Dialect, bool) {
	var doc yaml.Node
	// Text too large to parse within the default budget is told by its words (Parse refuses it).
	if budget.YAMLTooBig(src, budget.Defaults, "") != nil || yaml.Unmarshal(src, &doc) != nil || len(doc.Content) == 0 ||
		doc.Content[0].Kind != yaml.MappingNode {
		// Let Parse report the syntax error if it looks like a template at all.
		s := string(src)
		if strings.Contains(s, "ROSTemplateFormatVersion") {
			return template.ROS, true
		}
		return template.CloudFormation, strings.Contains(s, "Resources") || strings.Contains(s, "AWSTemplateFormatVersion")
	}
	var keys []string
	for i := 0; i < len(doc.Content[0].Content); i += 2 {
		keys = append(keys, doc.Content[0].Content[i].Value)
	}
	return detectKeys(keys)
}

func detectKeys(keys []string) (template.Dialect, bool) {
	found := false
	for _, k := range keys {
		switch k {
		case "ROSTemplateFormatVersion":
			return template.ROS, true
		case "AWSTemplateFormatVersion", "Resources":
			found = true
		}
	}
	return template.CloudFormation, found
}

// sections are the top-level keys; false means known but not supported.
var sections = map[string]bool{"AWSTemplateFormatVersion": true, "ROSTemplateFormatVersion": true, "Description": true,
	"Metadata": true, "Parameters": true, "Mappings": true, "Conditions": true, "Resources": true, "Outputs": true,
	"Transform": false, "Rules": false, "Locals": false, "Workspace": false}

var formatVersions = map[string]string{"AWSTemplateFormatVersion": "2010-09-09", "ROSTemplateFormatVersion": "2015-09-01"}

var resourceKeys = map[string]bool{"Type": true, "Properties": true, "DependsOn": true, "Condition": true,
	"DeletionPolicy": true, "UpdateReplacePolicy": true, "Metadata": true, "CreationPolicy": true, "UpdatePolicy": true,
	"Description": true}

var outputKeys = map[string]bool{"Value": true, "Description": true, "Condition": true, "Export": true}

var (
	cfnLogicalID = regexp.MustCompile(`^[A-Za-z0-9]+$`)
	rosLogicalID = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
)

// parser carries one Parse call.
type parser struct {
	decoder
	opts       Options
	b          *binding
	rangeBytes int64 // what is left of maxRangeBytes
}

// Parse parses and binds a template. It reports every problem it finds, not only the first;
// the Stack is nil when any of them is an error.
func Parse(filename string, src []byte, opts Options) (*template.Stack, diag.Diagnostics) {
	p := &parser{decoder: decoder{file: filename, bud: budget.From(opts.Context)}, opts: opts, rangeBytes: maxRangeBytes}
	root := p.parseDocument(src)
	if root == nil {
		return nil, p.diags
	}
	if root.kind != kMap {
		return nil, p.diags.Append(diag.Errorf(root.rng, "", "a template must be a map of sections"))
	}
	dialect, _ := detectKeys(root.keys)
	p.b = newBinding(dialect, opts, root.get("Mappings"), p.bud.Limits())
	p.sections(root)
	st := &template.Stack{Dialect: dialect, Policy: Policy(dialect)}
	if d := root.get("Description"); d != nil {
		st.Description = p.text(d, "Description")
	}
	p.mappings(root.get("Mappings"))
	p.declare(root.get("Resources"))
	st.Parameters = p.parameters(root.get("Parameters"))
	p.conditions(root.get("Conditions"))
	st.Resources = p.resources(root.get("Resources"))
	st.Outputs = p.outputs(root.get("Outputs"))
	p.check(st)
	// Found section by section; read top to bottom.
	slices.SortStableFunc(p.diags, func(a, b diag.Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Range.Line, b.Range.Line), cmp.Compare(a.Range.Column, b.Range.Column))
	})
	if p.diags.HasErrors() {
		return nil, p.diags
	}
	return st, p.diags
}

func (p *parser) errf(n *node, format string, args ...any) {
	p.diags = p.diags.Append(diag.Errorf(n.rng, n.path(), format, args...))
}

// text returns a literal string attribute, reporting anything else.
func (p *parser) text(n *node, what string) string {
	s, ok := n.str()
	if !ok {
		p.errf(n, "%s must be a string", what)
	}
	return s
}

func (p *parser) sections(root *node) {
	for i, k := range root.keys {
		supported, known := sections[k]
		switch {
		case !known:
			p.diags = p.diags.Append(diag.Errorf(root.keyRange(i), k, "unknown template section %s", k))
		case k == "Rules":
			p.diags = p.diags.Append(diag.Warnf(root.keyRange(i), k, "Rules are not checked by cairn"))
		case !supported:
			p.diags = p.diags.Append(diag.Errorf(root.keyRange(i), k, "template section %s is not supported by cairn", k))
		}
		if want, ok := formatVersions[k]; ok {
			if s, _ := root.vals[i].str(); s != want {
				p.errf(root.vals[i], "%s must be %q", k, want)
			}
		}
	}
}

// mappings checks that Mappings is a map of maps of maps.
func (p *parser) mappings(sec *node) {
	if sec == nil {
		return
	}
	if sec.kind != kMap {
		p.errf(sec, "Mappings must be a map of mappings")
		return
	}
	for _, m := range sec.vals {
		if m.kind != kMap {
			p.errf(m, "a mapping must be a map of top-level keys")
			continue
		}
		for _, top := range m.vals {
			if top.kind != kMap {
				p.errf(top, "a mapping's top-level key must hold a map of second-level keys")
			}
		}
	}
}

// declare records every resource's name before anything is evaluated, so a condition that
// names a resource is told so rather than that the name is unknown.
func (p *parser) declare(sec *node) {
	for _, name := range sec.mapKeys() {
		p.b.declared[name] = true
	}
}

// conditionOf returns the value of a resource's or output's Condition attribute (true when
// absent) and the condition's name.
func (p *parser) conditionOf(n *node) (cty.Value, string) {
	c := n.get("Condition")
	if c == nil {
		return cty.True, ""
	}
	if !c.isString() {
		p.errf(c, "Condition must be the name of a condition")
		return cty.True, ""
	}
	name, _ := c.str()
	ev := p.b.evaluator(p.bud, nil)
	v := p.b.decide(ev, c, name)
	p.diags = p.diags.Append(ev.diags)
	return v, name
}

// isFalse reports whether v is a known false condition.
func isFalse(v cty.Value) bool {
	return v.IsKnown() && !v.IsNull() && v.Type() == cty.Bool && v.False()
}

func (p *parser) resources(sec *node) []*template.Resource {
	if sec == nil || (sec.kind == kMap && len(sec.keys) == 0) {
		rng := diag.Range{Filename: p.file}
		if sec != nil {
			rng = sec.rng
		}
		p.diags = p.diags.Append(diag.Errorf(rng, "Resources", "a template needs at least one resource in Resources"))
		return nil
	}
	if sec.kind != kMap {
		p.errf(sec, "Resources must be a map")
		return nil
	}
	var out []*template.Resource
	for i, name := range sec.keys {
		if r := p.resource(name, sec.keyRange(i), sec.vals[i]); r != nil {
			out = append(out, r)
		}
	}
	return out
}

// logicalID checks the name of a resource, parameter or output.
func (p *parser) logicalID(name string, rng diag.Range, path string) {
	rule, allowed := cfnLogicalID, "letters and digits"
	if p.b.dialect == template.ROS {
		rule, allowed = rosLogicalID, "letters, digits, '_' and '-'"
	}
	if !rule.MatchString(name) {
		p.diags = p.diags.Append(diag.Errorf(rng, path, "invalid logical id %q: use %s only", name, allowed))
	}
}

func (p *parser) resource(name string, rng diag.Range, rn *node) *template.Resource {
	p.logicalID(name, rng, rn.path())
	if _, ok := p.b.params[name]; ok {
		p.errf(rn, "resource %s has the name of a parameter", name)
	}
	if rn.kind != kMap {
		p.errf(rn, "resource %s must be a map with Type and Properties", name)
		return nil
	}
	for j, k := range rn.keys {
		if !resourceKeys[k] {
			p.diags = p.diags.Append(diag.Errorf(rn.keyRange(j), rn.vals[j].path(), "unknown resource attribute %s", k))
		}
	}
	if c, cname := p.conditionOf(rn); isFalse(c) {
		p.b.excluded[name] = cname
		return nil
	}
	p.b.resources[name] = true
	r := &template.Resource{Name: name, Range: rng, PropertyRanges: map[string]diag.Range{},
		DeletionPolicy: p.policy(rn.get("DeletionPolicy")), UpdateReplacePolicy: p.policy(rn.get("UpdateReplacePolicy"))}
	if t := rn.get("Type"); t == nil {
		p.diags = p.diags.Append(diag.Errorf(rng, rn.path(), "resource %s needs a Type", name))
	} else if s, _ := t.str(); !t.isString() || s == "" {
		p.errf(t, "the Type of resource %s must be a resource type name", name)
	} else {
		r.Type, r.TypeRange = s, t.rng
	}
	props := rn.get("Properties")
	switch {
	case props == nil || (props.kind == kScalar && props.lit.IsNull()): // "Properties:" with nothing below
		r.Properties = template.Const(cty.EmptyObjectVal)
	case props.kind != kMap && props.kind != kFunc:
		p.errf(props, "Properties must be a map")
		r.Properties = template.Const(cty.EmptyObjectVal)
	default:
		r.Properties = expr{n: props, b: p.b}
		r.PropertyRanges[""] = rn.keyRangeOf("Properties")
		for j, k := range props.keys {
			p.ranges(r.PropertyRanges, k, k, props.vals[j], 1)
		}
	}
	if props != nil {
		p.b.props[name] = props
	}
	p.b.dependsOn[name] = p.dependsOn(rn.get("DependsOn"))
	return r
}

// maxRangeBytes and maxRangePath bound the property paths ranges records for a template: a
// property below them is located at its nearest recorded ancestor.
const (
	maxRangeBytes = 8 << 20
	maxRangePath  = 1024
)

// ranges records where each property below Properties is written. List elements are
// recorded as both "Tags.0.Key" (so template.Resource.PropertyRange falls back through
// "Tags.0" and "Tags") and "Tags[0].Key" (the form of diagnostic paths).
func (p *parser) ranges(m map[string]diag.Range, dotted, bracket string, n *node, depth int) {
	if p.rangeBytes -= int64(len(dotted) + len(bracket)); p.rangeBytes < 0 {
		return
	}
	m[dotted] = n.rng
	m[bracket] = n.rng
	if len(bracket) > maxRangePath || p.bud.Depth(depth+1) != nil {
		return
	}
	switch n.kind {
	case kMap:
		for i, k := range n.keys {
			p.ranges(m, dotted+"."+k, bracket+"."+k, n.vals[i], depth+1)
		}
	case kList:
		for i, c := range n.vals {
			p.ranges(m, dotted+"."+strconv.Itoa(i), bracket+"["+strconv.Itoa(i)+"]", c, depth+1)
		}
	}
}

func (p *parser) policy(n *node) template.Policy {
	if n == nil {
		return template.Delete
	}
	s, _ := n.str()
	switch template.Policy(s) {
	case template.Delete, template.Retain, template.Snapshot:
		return template.Policy(s)
	case "RetainExceptOnCreate":
		return template.Retain
	}
	p.errf(n, "invalid policy %q: use Delete, Retain or Snapshot", s)
	return template.Delete
}

// dependsOn returns the nodes naming a resource's explicit dependencies.
func (p *parser) dependsOn(n *node) []*node {
	if n == nil {
		return nil
	}
	items := []*node{n}
	if n.kind == kList {
		items = n.vals
	}
	var out []*node
	for _, it := range items {
		if !it.isString() {
			p.errf(it, "DependsOn takes a resource's logical id or a list of them")
			continue
		}
		out = append(out, it)
	}
	return out
}

func (p *parser) outputs(sec *node) []*template.Output {
	if sec == nil {
		return nil
	}
	if sec.kind != kMap {
		p.errf(sec, "Outputs must be a map")
		return nil
	}
	var out []*template.Output
	for i, name := range sec.keys {
		on := sec.vals[i]
		p.logicalID(name, sec.keyRange(i), on.path())
		if on.kind != kMap || on.get("Value") == nil {
			p.diags = p.diags.Append(diag.Errorf(sec.keyRange(i), on.path(), "output %s needs a Value", name))
			continue
		}
		for j, k := range on.keys {
			if !outputKeys[k] {
				p.diags = p.diags.Append(diag.Errorf(on.keyRange(j), on.vals[j].path(), "unknown output attribute %s", k))
			}
		}
		if c, _ := p.conditionOf(on); isFalse(c) {
			continue
		}
		o := &template.Output{Name: name, Value: expr{n: on.get("Value"), b: p.b}, Range: sec.keyRange(i)}
		if d := on.get("Description"); d != nil {
			o.Description = p.text(d, "Description")
		}
		p.b.outputs = append(p.b.outputs, on.get("Value"))
		out = append(out, o)
	}
	return out
}
