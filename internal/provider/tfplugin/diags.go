package tfplugin

import (
	"fmt"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	tf6 "github.com/cairn-dev/cairn/internal/tfplugin6"
)

// stopTimeout bounds the Stop call sent on cancellation.
const stopTimeout = 10 * time.Second

func unmark(v cty.Value) cty.Value {
	v, _ = v.UnmarkDeep()
	return v
}

// diagnostics converts the provider's diagnostics; Path is the attribute path, dotted.
func diagnostics(in []*tf6.Diagnostic) diag.Diagnostics {
	var out diag.Diagnostics
	for _, d := range in {
		sev := diag.Error
		if d.Severity == tf6.Diagnostic_WARNING {
			sev = diag.Warning
		}
		out = append(out, diag.Diagnostic{Severity: sev, Summary: d.Summary, Detail: d.Detail, Path: pathString(d.Attribute)})
	}
	return out
}

// reason is a diagnostic as one line: "summary: detail".
func reason(d *tf6.Diagnostic) string {
	if d.Detail == "" {
		return d.Summary
	}
	return d.Summary + ": " + d.Detail
}

// pathString renders an attribute path as cairn's dotted property paths: attributes and list
// indexes separated by dots, map keys in brackets.
func pathString(p *tf6.AttributePath) string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	for _, s := range p.Steps {
		switch sel := s.Selector.(type) {
		case *tf6.AttributePath_Step_AttributeName:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(sel.AttributeName)
		case *tf6.AttributePath_Step_ElementKeyInt:
			fmt.Fprintf(&b, ".%d", sel.ElementKeyInt)
		case *tf6.AttributePath_Step_ElementKeyString:
			fmt.Fprintf(&b, "[%q]", sel.ElementKeyString)
		}
	}
	return b.String()
}
