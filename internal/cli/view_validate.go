package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/api"
)

// validate prints a validation: diagnostics then, when valid, the declared parameters; or
// the api.ValidateResponse as JSON.
func (v view) validate(res api.ValidateResponse) error {
	if v.json {
		return writeJSON(v.w, res)
	}
	writeValidate(v.w, res)
	return nil
}

// hasErrors reports whether any diagnostic is an error.
func hasErrors(ds []api.Diagnostic) bool {
	for _, d := range ds {
		if d.Severity != "warning" {
			return true
		}
	}
	return false
}

// formatDiagnostic renders d as "file:line:col: Path: summary", leaving out empty parts.
func formatDiagnostic(d api.Diagnostic) string {
	var parts []string
	if d.File != "" {
		loc := d.File
		if d.Line > 0 {
			loc += ":" + strconv.Itoa(d.Line)
			if d.Column > 0 {
				loc += ":" + strconv.Itoa(d.Column)
			}
		}
		parts = append(parts, loc)
	}
	if d.Path != "" {
		parts = append(parts, d.Path)
	}
	summary := d.Summary
	if d.Severity == "warning" {
		summary = "warning: " + summary
	}
	if d.Detail != "" {
		summary += ": " + d.Detail
	}
	return strings.Join(append(parts, summary), ": ")
}

// writeValidate prints the diagnostics of a validation, then, when valid, the parameters.
func writeValidate(w io.Writer, v api.ValidateResponse) {
	for _, d := range v.Diagnostics {
		fmt.Fprintln(w, formatDiagnostic(d))
	}
	if !v.Valid || hasErrors(v.Diagnostics) {
		return
	}
	fmt.Fprintln(w, "template is valid")
	if len(v.Parameters) > 0 {
		fmt.Fprintln(w, "Parameters:")
		writeParameters(w, v.Parameters)
	}
}
