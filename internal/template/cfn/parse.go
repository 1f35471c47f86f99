package cfn

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/internal/dag"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// Options bind a template to a stack.
type Options struct {
	Parameters                            map[string]string // values given by the user, all strings as in CloudFormation
	StackName, StackID, Region, AccountID string
	// Validate makes a parameter with neither value nor Default an unknown value instead of an
	// error, so a template can be checked without its parameter values.
	Validate bool
}

// Detect reports the template's dialect, or false when src is not a CloudFormation or ROS
// template.
func Detect(src []byte) (template.Dialect, bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		// Let Parse report the syntax error if it looks like a template at all.
		s := string(src)
		if strings.Contains(s, "ROSTemplateFormatVersion") {
			return template.ROS, true
		}
		return template.CloudFormation, strings.Contains(s, "Resources") || strings.Contains(s, "AWSTemplateFormatVersion")
	}
	found := false
	for i := 0; i < len(doc.Content[0].Content); i += 2 {
		switch doc.Content[0].Content[i].Value {
		case "ROSTemplateFormatVersion":
			return template.ROS, true
		case "AWSTemplateFormatVersion", "Resources":
			found = true
		}
	}
	return template.CloudFormation, found
}

var sections = map[string]bool{"AWSTemplateFormatVersion": true, "ROSTemplateFormatVersion": true, "Description": true,
	"Metadata": true, "Parameters": true, "Mappings": true, "Conditions": true, "Resources": true, "Outputs": true,
	"Transform": true, "Rules": true, "Workspace": true, "Locals": true}

var resourceKeys = map[string]bool{"Type": true, "Properties": true, "DependsOn": true, "Condition": true,
	"DeletionPolicy": true, "UpdateReplacePolicy": true, "Metadata": true, "CreationPolicy": true, "UpdatePolicy": true,
	"Description": true}

var (
	cfnLogicalID = regexp.MustCompile(`^[A-Za-z0-9]+$`)
	rosLogicalID = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
)

// parser carries one Parse call.
type parser struct {
	decoder
	opts    Options
	dialect template.Dialect
	b       *binding
}

// Parse parses and binds a template. It reports every problem it finds, not only the first;
// the Stack is nil when any is an error.
func Parse(filename string, src []byte, opts Options) (*template.Stack, diag.Diagnostics) {
	p := &parser{decoder: decoder{file: filename}, opts: opts}
	root := p.parseDocument(src)
	if root == nil {
		return nil, p.diags
	}
	if root.kind != kMap {
		return nil, p.diags.Append(diag.Errorf(root.rng, "", "a template must be a map of sections"))
	}
	p.dialect, _ = Detect(src)
	for i, k := range root.keys {
		if !sections[k] {
			p.diags = p.diags.Append(diag.Errorf(root.keyRange(i), k, "unknown template section %s", k))
		}
	}
	st := &template.Stack{Dialect: p.dialect}
	if d, ok := root.get("Description").str(); ok {
		st.Description = d
	}
	p.b = &binding{params: map[string]cty.Value{}, pseudo: p.pseudo(), mappings: root.get("Mappings"),
		condNodes: map[string]*node{}, conds: map[string]cty.Value{}, deciding: map[string]bool{},
		resources: map[string]bool{}, excluded: map[string]string{}}
	st.Parameters = p.parameters(root.get("Parameters"))
	p.conditions(root.get("Conditions"))
	st.Resources = p.resources(root.get("Resources"))
	st.Outputs = p.outputs(root.get("Outputs"))
	p.dependencies(st)
	if p.diags.HasErrors() {
		return nil, p.diags
	}
	return st, p.diags
}

func (p *parser) errf(n *node, format string, args ...any) {
	p.diags = p.diags.Append(diag.Errorf(n.rng, n.path, format, args...))
}

func (p *parser) pseudo() map[string]cty.Value {
	partition := "aws"
	if strings.HasPrefix(p.opts.Region, "cn-") {
		partition = "aws-cn"
	}
	o := p.opts
	return map[string]cty.Value{
		"AWS::StackName": cty.StringVal(o.StackName), "AWS::StackId": cty.StringVal(o.StackID),
		"AWS::Region": cty.StringVal(o.Region), "AWS::AccountId": cty.StringVal(o.AccountID),
		"AWS::Partition": cty.StringVal(partition), "AWS::URLSuffix": cty.StringVal("amazonaws.com"),
		"AWS::NotificationARNs": cty.EmptyTupleVal,
		"ALIYUN::StackName":     cty.StringVal(o.StackName), "ALIYUN::StackId": cty.StringVal(o.StackID),
		"ALIYUN::Region": cty.StringVal(o.Region), "ALIYUN::AccountId": cty.StringVal(o.AccountID),
		"ALIYUN::TenantId": cty.StringVal(o.AccountID),
	}
}

// conditions records the declared conditions and decides each.
func (p *parser) conditions(sec *node) {
	if sec == nil {
		return
	}
	if sec.kind != kMap {
		p.errf(sec, "Conditions must be a map")
		return
	}
	for i, k := range sec.keys {
		p.b.condNodes[k] = sec.vals[i]
	}
	ev := &evaluator{b: p.b}
	for _, k := range sec.keys {
		p.b.decide(ev, sec.get(k), k)
	}
	p.diags = p.diags.Append(ev.diags)
}

// conditionOf returns the value of a resource's or output's Condition attribute (true when
// absent).
func (p *parser) conditionOf(n *node) (cty.Value, string) {
	c := n.get("Condition")
	if c == nil {
		return cty.True, ""
	}
	name, ok := c.str()
	if !ok {
		p.errf(c, "Condition must be the name of a condition")
		return cty.True, ""
	}
	ev := &evaluator{b: p.b}
	v := p.b.decide(ev, c, name)
	p.diags = p.diags.Append(ev.diags)
	return v, name
}

func (p *parser) resources(sec *node) []*template.Resource {
	if sec == nil || (sec.kind == kMap && len(sec.keys) == 0) {
		at := sec
		if at == nil {
			at = &node{rng: diag.Range{Filename: p.file}}
		}
		p.diags = p.diags.Append(diag.Errorf(at.rng, "Resources", "a template needs at least one resource in Resources"))
		return nil
	}
	if sec.kind != kMap {
		p.errf(sec, "Resources must be a map")
		return nil
	}
	idRule := cfnLogicalID
	if p.dialect == template.ROS {
		idRule = rosLogicalID
	}
	var out []*template.Resource
	for i, name := range sec.keys {
		rn := sec.vals[i]
		if !idRule.MatchString(name) {
			p.errf(rn, "invalid logical id %q: use letters and digits only%s", name, map[bool]string{true: ", '_' and '-'"}[p.dialect == template.ROS])
		}
		if rn.kind != kMap {
			p.errf(rn, "a resource must be a map with Type and Properties")
			continue
		}
		for j, k := range rn.keys {
			if !resourceKeys[k] {
				p.errf(rn.vals[j], "unknown resource attribute %s", k)
			}
		}
		if c, cname := p.conditionOf(rn); c.IsKnown() && c.Type() == cty.Bool && c.False() {
			p.b.excluded[name] = cname
			continue
		}
		p.b.resources[name] = true
		r := &template.Resource{Name: name, Range: sec.keyRange(i), PropertyRanges: map[string]diag.Range{},
			DeletionPolicy: p.policy(rn.get("DeletionPolicy")), UpdateReplacePolicy: p.policy(rn.get("UpdateReplacePolicy"))}
		if t, ok := rn.get("Type").str(); ok && t != "" {
			r.Type = t
			r.PropertyRanges[""] = rn.get("Type").rng
		} else {
			at := rn.get("Type")
			if at == nil {
				at = &node{rng: r.Range, path: rn.path}
			}
			p.errf(at, "resource %s needs a Type", name)
		}
		props := rn.get("Properties")
		switch {
		case props == nil:
			r.Properties = template.Const(cty.EmptyObjectVal)
		case props.kind != kMap && props.kind != kFunc:
			p.errf(props, "Properties must be a map")
			r.Properties = template.Const(cty.EmptyObjectVal)
		default:
			r.Properties = expr{n: props, b: p.b}
			r.PropertyRanges[""] = props.rng
			for j, k := range props.keys {
				p.ranges(r.PropertyRanges, k, props.vals[j])
			}
		}
		r.DependsOn = p.dependsOn(rn.get("DependsOn"))
		out = append(out, r)
	}
	return out
}

// ranges records where each property below Properties is written.
func (p *parser) ranges(m map[string]diag.Range, path string, n *node) {
	m[path] = n.rng
	switch n.kind {
	case kMap:
		for i, k := range n.keys {
			p.ranges(m, path+"."+k, n.vals[i])
		}
	case kList:
		for i, c := range n.vals {
			p.ranges(m, fmt.Sprintf("%s[%d]", path, i), c)
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

func (p *parser) dependsOn(n *node) []string {
	if n == nil {
		return nil
	}
	items := []*node{n}
	if n.kind == kList {
		items = n.vals
	}
	var out []string
	for _, it := range items {
		s, ok := it.str()
		if !ok || it.kind != kScalar {
			p.errf(it, "DependsOn takes a resource's logical id or a list of them")
			continue
		}
		out = append(out, s)
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
		if on.kind != kMap || on.get("Value") == nil {
			p.errf(on, "output %s needs a Value", name)
			continue
		}
		if c, _ := p.conditionOf(on); c.IsKnown() && c.Type() == cty.Bool && c.False() {
			continue
		}
		o := &template.Output{Name: name, Value: expr{n: on.get("Value"), b: p.b}, Range: sec.keyRange(i)}
		o.Description, _ = on.get("Description").str()
		out = append(out, o)
	}
	return out
}

// recorder is the scope of the check pass: every resource is unknown, and references are
// recorded as dependencies.
type recorder struct {
	st   *template.Stack
	refs map[string]bool
}

func (r *recorder) Resource(name string) (template.ResourceValue, bool) {
	if r.st.Resource(name) == nil {
		return template.ResourceValue{}, false
	}
	r.refs[name] = true
	return template.UnknownResource, true
}

// dependencies evaluates every expression once against unknown resources, which checks each
// function's arguments and finds each resource's references, then rejects cycles.
func (p *parser) dependencies(st *template.Stack) {
	g := dag.New()
	for _, r := range st.Resources {
		rec := &recorder{st: st, refs: map[string]bool{}}
		_, ds := r.Properties.Eval(rec)
		p.diags = p.diags.Append(ds)
		for _, d := range r.DependsOn {
			if st.Resource(d) == nil {
				p.diags = p.diags.Append(diag.Errorf(r.Range, "Resources."+r.Name+".DependsOn",
					"DependsOn names %s, which is not a resource of this template%s", d, excludedNote(p.b, d)))
				continue
			}
			rec.refs[d] = true
		}
		if rec.refs[r.Name] {
			p.diags = p.diags.Append(diag.Errorf(r.Range, "Resources."+r.Name, "dependency cycle: %s -> %s", r.Name, r.Name))
			delete(rec.refs, r.Name)
		}
		r.DependsOn = r.DependsOn[:0]
		for d := range rec.refs {
			r.DependsOn = append(r.DependsOn, d)
		}
		sort.Strings(r.DependsOn)
		g.Add(r.Name, r.DependsOn...)
	}
	for _, o := range st.Outputs {
		_, ds := o.Value.Eval(&recorder{st: st, refs: map[string]bool{}})
		p.diags = p.diags.Append(ds)
	}
	if cycle := g.Cycle(); cycle != nil {
		r := st.Resource(cycle[0])
		p.diags = p.diags.Append(diag.Errorf(r.Range, "Resources."+r.Name, "%s", (&dag.CycleError{Path: cycle}).Error()))
	}
}

func excludedNote(b *binding, name string) string {
	if c, ok := b.excluded[name]; ok {
		return " (it is left out because its condition " + c + " is false)"
	}
	return ""
}
