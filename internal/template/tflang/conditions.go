package tflang

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// Custom conditions, as terraform 1.11 checks them (internal/terraform/eval_conditions.go):
// a resource's preconditions and postconditions, an output's preconditions and a check
// block's assertions. A condition whose result is not known yet is checked again later; a
// failure names the condition's expression and says its error_message.

// ruleKind is what a check rule belongs to; its description starts terraform's summary.
type ruleKind string

const (
	resourcePrecondition  ruleKind = "Resource precondition"
	resourcePostcondition ruleKind = "Resource postcondition"
	outputPrecondition    ruleKind = "Module output value precondition"
	checkAssertion        ruleKind = "Check block assertion"
)

// checkRule is a precondition, postcondition or assert block.
type checkRule struct {
	kind      ruleKind
	condition hcl.Expression
	message   hcl.Expression
}

var checkRuleSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "condition", Required: true}, {Name: "error_message", Required: true}}}

// decodeRule reads a check-shaped block; nil with errors when it cannot be used.
func decodeRule(kind ruleKind, b *hcl.Block) (*checkRule, hcl.Diagnostics) {
	content, ds := b.Body.Content(checkRuleSchema)
	ca, okc := content.Attributes["condition"]
	ma, okm := content.Attributes["error_message"]
	if !okc || !okm {
		return nil, ds
	}
	if len(ca.Expr.Variables()) == 0 {
		ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: fmt.Sprintf("Invalid %s expression", b.Type),
			Detail:  "The condition expression must refer to at least one object from elsewhere in the configuration, or else its result would not be checking anything.",
			Subject: ca.Expr.Range().Ptr()})
	}
	if ds.HasErrors() {
		return nil, ds
	}
	return &checkRule{kind: kind, condition: ca.Expr, message: ma.Expr}, ds
}

// refs is everything the rule reads.
func (r *checkRule) refs() []hcl.Traversal {
	return append(r.condition.Variables(), r.message.Variables()...)
}

// selfReferences refuses a resource's conditions that name the resource itself, as terraform
// does: a postcondition reads it as self.
func selfReferences(rules []*checkRule, what, key string) hcl.Diagnostics {
	var ds hcl.Diagnostics
	for _, r := range rules {
		for _, x := range []hcl.Expression{r.condition, r.message} {
			for _, t := range x.Variables() {
				if resourceKey(t) == key {
					ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid reference in " + what,
						Detail: fmt.Sprintf("Configuration for %s may not refer to itself.", key), Subject: x.Range().Ptr()})
					break
				}
			}
		}
	}
	return ds
}

// resourceKey is the resource block a traversal names ("type.name", "data.type.name"), or "".
func resourceKey(t hcl.Traversal) string {
	var names []string
	for i := 0; i < len(t) && i < 3; i++ {
		switch s := t[i].(type) {
		case hcl.TraverseRoot:
			names = append(names, s.Name)
		case hcl.TraverseAttr:
			names = append(names, s.Name)
		default:
			i = len(t)
		}
	}
	switch {
	case len(names) < 2:
		return ""
	case names[0] == "data":
		if len(names) == 3 {
			return strings.Join(names, ".")
		}
		return ""
	}
	switch names[0] {
	case "var", "local", "module", "count", "each", "path", "terraform", "self":
		return ""
	}
	return names[0] + "." + names[1]
}

// lifecycleSchema is the lifecycle block, as terraform 1.11 reads it.
var lifecycleSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "create_before_destroy"}, {Name: "prevent_destroy"}, {Name: "ignore_changes"},
		{Name: "replace_triggered_by"}},
	Blocks: []hcl.BlockHeaderSchema{{Type: "precondition"}, {Type: "postcondition"}}}

// readRules reads the precondition and postcondition blocks of a lifecycle block and returns
// its arguments.
func (l *lifecycle) readRules(b *hcl.Block) (hcl.Attributes, hcl.Diagnostics) {
	content, ds := b.Body.Content(lifecycleSchema)
	for _, rb := range content.Blocks {
		kind := resourcePrecondition
		if rb.Type == "postcondition" {
			kind = resourcePostcondition
		}
		r, d := decodeRule(kind, rb)
		ds = append(ds, d...)
		if r == nil {
			continue
		}
		if kind == resourcePrecondition {
			l.pre = append(l.pre, r)
		} else {
			l.post = append(l.post, r)
		}
	}
	return content.Attributes, ds
}

// outputSchema is the output block, as terraform 1.11 reads it (value is checked by
// outputAttrs).
var outputSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "value"}, {Name: "description"}, {Name: "sensitive"}, {Name: "ephemeral"}, {Name: "depends_on"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "precondition"}}}

// outputContent splits an output block into its arguments and its precondition blocks.
func outputContent(b *hcl.Block) (hcl.Attributes, []*checkRule, hcl.Diagnostics) {
	content, ds := b.Body.Content(outputSchema)
	var rules []*checkRule
	for _, pb := range content.Blocks {
		r, d := decodeRule(outputPrecondition, pb)
		ds = append(ds, d...)
		if r != nil {
			rules = append(rules, r)
		}
	}
	return content.Attributes, rules, ds
}

// checkBlock is a check block: an optional scoped data source and its assertions.
type checkBlock struct {
	name    string
	block   *hcl.Block
	data    string // key of its scoped data source among the module's resources, or ""
	asserts []*checkRule
}

var checkSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "data", LabelNames: []string{"type", "name"}}, {Type: "assert"}}}

func (m *config) addCheck(b *hcl.Block) hcl.Diagnostics {
	name := b.Labels[0]
	for _, c := range m.checks {
		if c.name == name {
			return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Duplicate check block",
				Detail:  fmt.Sprintf("A check block named %q was already defined at %s. Check blocks must have unique names within a module.", name, c.block.DefRange),
				Subject: &b.LabelRanges[0]}}
		}
	}
	content, ds := b.Body.Content(checkSchema)
	if !hclsyntax.ValidIdentifier(name) {
		ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid check block name",
			Detail: "A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.", Subject: &b.LabelRanges[0]})
	}
	c := &checkBlock{name: name, block: b}
	for _, nb := range content.Blocks {
		switch nb.Type {
		case "data":
			if c.data != "" {
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Multiple data resource blocks",
					Detail: fmt.Sprintf("This check block already has a data resource defined at %s.", m.resources[c.data].block.DefRange), Subject: nb.DefRange.Ptr()})
				continue
			}
			d := m.addResource(nb)
			ds = append(ds, d...)
			if !d.HasErrors() {
				c.data = "data." + nb.Labels[0] + "." + nb.Labels[1]
				m.resources[c.data].check = "check." + name
			}
		case "assert":
			r, d := decodeRule(checkAssertion, nb)
			ds = append(ds, d...)
			if r != nil {
				c.asserts = append(c.asserts, r)
			}
		}
	}
	if len(c.asserts) == 0 && !ds.HasErrors() {
		ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Zero assert blocks",
			Detail: "Check blocks must have at least one assert block.", Subject: b.DefRange.Ptr()})
	}
	m.checks = append(m.checks, c)
	return ds
}

// addChecks adds the check blocks of m to st.
func (m *module) addChecks(st *template.Stack) {
	for _, c := range m.checks {
		tc := &template.Check{Name: m.prefix + "check." + c.name, Range: rangeOf(c.block.DefRange)}
		for _, r := range c.asserts {
			tc.Asserts = append(tc.Asserts, &condition{m: m, rule: r, check: "check." + c.name})
		}
		st.Checks = append(st.Checks, tc)
	}
}

// conditions makes the template conditions of rules for one instance.
func (m *module) conditions(rules []*checkRule, k key) []template.Condition {
	var out []template.Condition
	for _, r := range rules {
		out = append(out, &condition{m: m, rule: r, key: k})
	}
	return out
}

// condition is one check rule of one instance: a template.Condition.
type condition struct {
	m     *module
	rule  *checkRule
	key   key
	check string // the check block of an assertion: its scoped data source is visible
}

// Check implements template.Condition.
func (c *condition) Check(s template.Scope, self cty.Value) diag.Diagnostics {
	e := c.m.evaluator(s, c.key)
	defer e.done()
	e.s.self, e.s.check = self, c.check
	sev := hcl.DiagError
	if c.rule.kind == checkAssertion {
		sev = hcl.DiagWarning
	}
	cond := c.rule.condition
	if ds := e.nest(cond.Range()); ds.HasErrors() {
		return convertDiags(ds, c.m.files)
	}
	defer e.unnest()
	ctx, ds := e.context(c.rule.refs())
	if ds.HasErrors() {
		return convertDiags(asSeverity(ds, sev), c.m.files)
	}
	result, d := cond.Value(ctx)
	msg, md := c.rule.message.Value(ctx)
	ds = append(ds, d...)
	if ds.HasErrors() {
		return convertDiags(asSeverity(ds, sev), c.m.files)
	}
	if !result.IsKnown() {
		return nil
	}
	fail := func(summary, detail string, subject hcl.Range) diag.Diagnostics {
		return convertDiags(hcl.Diagnostics{{Severity: sev, Summary: summary, Detail: detail, Subject: &subject}}, c.m.files)
	}
	if result.IsNull() {
		return fail("Invalid condition result", "Condition expression must return either true or false, not null.", cond.Range())
	}
	result, err := convert.Convert(result, cty.Bool)
	if err != nil {
		return fail("Invalid condition result", fmt.Sprintf("Invalid condition result value: %s.", err), cond.Range())
	}
	if result, _ = result.Unmark(); result.True() {
		return nil
	}
	var out diag.Diagnostics
	text := ""
	if !md.HasErrors() && msg.IsWhollyKnown() && !msg.IsNull() {
		if sv, err := convert.Convert(msg, cty.String); err != nil {
			out = out.Append(fail("Invalid error message", fmt.Sprintf("Unsuitable value for error message: %s.", err), c.rule.message.Range()))
		} else if value.IsSecret(sv) {
			out = out.Append(fail("Error message refers to sensitive values",
				"The error expression used to explain this condition refers to sensitive values. cairn, like terraform, will not display the resulting message.\n\n"+
					"You can correct this by removing references to sensitive values, or by carefully using the nonsensitive() function if the expression will not reveal the sensitive data.",
				c.rule.message.Range()))
			text = "The error message included a sensitive value, so it will not be displayed."
		} else {
			sv, _ = sv.Unmark()
			text = strings.TrimSpace(sv.AsString())
		}
	}
	if text == "" {
		text = "Failed to evaluate condition error message."
	}
	return out.Append(fail(string(c.rule.kind)+" failed", text, cond.Range()))
}

// asSeverity turns the errors of a check block's assertion into warnings: nothing about a
// check block stops an operation.
func asSeverity(ds hcl.Diagnostics, sev hcl.DiagnosticSeverity) hcl.Diagnostics {
	if sev == hcl.DiagError {
		return ds
	}
	out := make(hcl.Diagnostics, len(ds))
	for i, d := range ds {
		c := *d
		c.Severity = sev
		out[i] = &c
	}
	return out
}
