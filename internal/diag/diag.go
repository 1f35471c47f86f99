// Package diag holds user-facing diagnostics: problems a person must read and fix, each
// pointing at the file, line, column and path of the value it is about.
//
// Errors report failures of the machinery; Diagnostics report things a user must act on.
// Collect every diagnostic in one pass and return them together. It imports nothing of ours.
package diag

import (
	"errors"
	"fmt"
	"strings"
)

// Severity says whether a diagnostic stops the operation.
type Severity int

const (
	Error Severity = iota
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Range locates a value in a source file. Line and Column are 1-based; zero means unknown.
type Range struct {
	Filename string `json:"filename,omitempty"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
}

func (r Range) String() string {
	switch {
	case r.Filename == "":
		return ""
	case r.Line == 0:
		return r.Filename
	default:
		return fmt.Sprintf("%s:%d:%d", r.Filename, r.Line, r.Column)
	}
}

// Diagnostic is one problem for a user. Path is the dotted path of the offending value in the
// template, such as "Resources.Db.Properties.Size".
type Diagnostic struct {
	Severity Severity `json:"severity"`
	Summary  string   `json:"summary"`
	Detail   string   `json:"detail,omitempty"`
	Range    Range    `json:"range,omitzero"`
	Path     string   `json:"path,omitempty"`
}

// Error renders the diagnostic as one line: "file:line:col: path: summary: detail".
func (d Diagnostic) Error() string {
	var b strings.Builder
	if s := d.Range.String(); s != "" {
		b.WriteString(s)
		b.WriteString(": ")
	}
	if d.Path != "" {
		b.WriteString(d.Path)
		b.WriteString(": ")
	}
	b.WriteString(d.Summary)
	if d.Detail != "" {
		b.WriteString(": ")
		b.WriteString(d.Detail)
	}
	return b.String()
}

// Errorf builds an error diagnostic at rng for the value at path.
func Errorf(rng Range, path, format string, args ...any) Diagnostic {
	return Diagnostic{Severity: Error, Summary: fmt.Sprintf(format, args...), Range: rng, Path: path}
}

// Warnf builds a warning diagnostic at rng for the value at path.
func Warnf(rng Range, path, format string, args ...any) Diagnostic {
	return Diagnostic{Severity: Warning, Summary: fmt.Sprintf(format, args...), Range: rng, Path: path}
}

// Diagnostics is a list of diagnostics; the nil list means "nothing to report".
type Diagnostics []Diagnostic

// Append adds Diagnostic, Diagnostics or error values (an error becomes an error diagnostic)
// and returns the longer list. Nil values are ignored.
func (ds Diagnostics) Append(items ...any) Diagnostics {
	for _, it := range items {
		switch v := it.(type) {
		case nil:
		case Diagnostic:
			ds = append(ds, v)
		case Diagnostics:
			ds = append(ds, v...)
		case error:
			var d Diagnostic
			var dd Diagnostics
			switch {
			case errors.As(v, &dd):
				ds = append(ds, dd...)
			case errors.As(v, &d):
				ds = append(ds, d)
			default:
				ds = append(ds, Diagnostic{Severity: Error, Summary: v.Error()})
			}
		default:
			panic(fmt.Sprintf("diag: cannot append %T", it))
		}
	}
	return ds
}

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Errors returns only the error diagnostics.
func (ds Diagnostics) Errors() Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == Error {
			out = append(out, d)
		}
	}
	return out
}

// Err returns the error diagnostics as one error, or nil when there are none.
func (ds Diagnostics) Err() error {
	if !ds.HasErrors() {
		return nil
	}
	return ds.Errors()
}

// Error renders one diagnostic per line.
func (ds Diagnostics) Error() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.Error()
	}
	return strings.Join(lines, "\n")
}
