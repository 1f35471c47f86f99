package tflang

import (
	"fmt"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// LanguageVersion is the terraform release whose language cairn implements: what a
// terraform block's required_version is checked against (provider Configure calls and state
// files announce the same version).
const LanguageVersion = "1.11.4"

var terraformSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "required_version"}},
	Blocks: []hcl.BlockHeaderSchema{{Type: "required_providers"}, {Type: "backend", LabelNames: []string{"type"}},
		{Type: "cloud"}},
}

// checkCore checks a terraform block as terraform init does for what is not about providers:
// required_version must admit LanguageVersion ("Unsupported Terraform Core version"); a
// backend or cloud block, which tells terraform where to keep its state, is a warning, as cairn
// keeps the state itself (terraform state moves in with `cairn state push`).
func (m *config) checkCore(content *hcl.BodyContent) hcl.Diagnostics {
	var ds hcl.Diagnostics
	if a, ok := content.Attributes["required_version"]; ok {
		v, d := m.static(a.Expr)
		ds = append(ds, d...)
		if !d.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() {
			cs, err := version.NewConstraint(v.AsString())
			switch {
			case err != nil:
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid required_version constraint",
					Detail: fmt.Sprintf("This string does not use correct version constraint syntax: %s.", err), Subject: a.Expr.Range().Ptr()})
			case !cs.Check(version.Must(version.NewVersion(LanguageVersion))):
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unsupported Terraform Core version",
					Detail: fmt.Sprintf("This configuration does not support Terraform version %s, the language version cairn implements. "+
						"To proceed, either choose another supported Terraform version or update this version constraint. Version "+
						"constraints are normally set for good reason, so updating the constraint may lead to other errors or "+
						"unexpected behavior.", LanguageVersion), Subject: a.Expr.Range().Ptr()})
			}
		}
	}
	for _, b := range content.Blocks {
		if b.Type != "backend" && b.Type != "cloud" {
			continue
		}
		what := b.Type
		if len(b.Labels) > 0 {
			what = fmt.Sprintf("backend %q", b.Labels[0])
		}
		ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Backend configuration ignored",
			Detail: fmt.Sprintf("cairn keeps the stack's state itself, so the %s block is not used. To bring a state that terraform "+
				"kept there, run terraform state pull, then cairn state push.", what), Subject: b.DefRange.Ptr()})
	}
	return ds
}
