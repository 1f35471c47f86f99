package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cairn-dev/cairn/api"
)

// Views render API values as text. They only write; they decide nothing.

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// eventPrinter prints events one line each, columns aligned as far as the lines seen so far
// allow (it streams, so widths only grow).
type eventPrinter struct {
	w      io.Writer
	colour bool
	loc    *time.Location
	widths [3]int // logical id, type, status
}

func newEventPrinter(w io.Writer, colour bool) *eventPrinter {
	return &eventPrinter{w: w, colour: colour, loc: timeZone, widths: [3]int{16, 26, 20}}
}

func (p *eventPrinter) print(ev api.Event) {
	cols := [3]string{ev.LogicalID, ev.Type, ev.Status}
	var b strings.Builder
	b.WriteString(ev.Timestamp.In(p.loc).Format(time.TimeOnly))
	for i, c := range cols {
		p.widths[i] = max(p.widths[i], len(c))
		b.WriteString("  ")
		pad := strings.Repeat(" ", p.widths[i]-len(c))
		if i == 2 {
			c = colourStatus(c, p.colour)
			if ev.Reason == "" {
				pad = ""
			}
		}
		b.WriteString(c + pad)
	}
	if ev.Reason != "" {
		b.WriteString("  " + ev.Reason)
	}
	fmt.Fprintln(p.w, b.String())
}

const (
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiReset  = "\x1b[0m"
)

// colourStatus colours a resource or stack status: red for failures and rollbacks, green
// for completion, yellow for work in progress.
func colourStatus(s string, colour bool) string {
	if !colour {
		return s
	}
	switch {
	case strings.HasSuffix(s, "FAILED") || strings.Contains(s, "ROLLBACK"):
		return ansiRed + s + ansiReset
	case strings.HasSuffix(s, "_COMPLETE"):
		return ansiGreen + s + ansiReset
	case strings.HasSuffix(s, "IN_PROGRESS"):
		return ansiYellow + s + ansiReset
	}
	return s
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

// formatValue renders a property or output value: strings as they are when raw, otherwise
// compact JSON; the masked and unknown markers always as they are.
func formatValue(v any, raw bool) string {
	switch s := v.(type) {
	case nil:
		return "(none)"
	case string:
		if raw || s == api.UnknownMarker || s == "****" {
			return s
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// writePreview prints the changes of a preview, one line each with property details below.
func writePreview(w io.Writer, p api.PreviewResponse) {
	n := 0
	for _, c := range p.Changes {
		var line string
		switch c.Action {
		case api.ActionAdd:
			line = fmt.Sprintf("+ Add  %s (%s)", c.LogicalID, c.Type)
		case api.ActionModify:
			line = fmt.Sprintf("~ Modify  %s (%s)", c.LogicalID, c.Type)
			if c.Replacement != "" {
				line += "  replacement: " + c.Replacement
			}
		case api.ActionRemove:
			line = fmt.Sprintf("- Remove  %s (%s)", c.LogicalID, c.Type)
		case api.ActionNoop, "":
			continue
		default:
			line = fmt.Sprintf("? %s  %s (%s)", c.Action, c.LogicalID, c.Type)
		}
		n++
		fmt.Fprintln(w, line)
		for _, d := range c.Details {
			fmt.Fprintf(w, "    %s: %s -> %s\n", d.Name, formatValue(d.Before, false), formatValue(d.After, false))
		}
	}
	if n == 0 {
		fmt.Fprintln(w, "No changes.")
	}
}

// writeValidate prints the diagnostics of a validation, then, when valid, the parameters.
func writeValidate(w io.Writer, v api.ValidateResponse) {
	for _, d := range v.Diagnostics {
		fmt.Fprintln(w, formatDiagnostic(d))
	}
	if !v.Valid {
		return
	}
	fmt.Fprintln(w, "template is valid")
	if len(v.Parameters) > 0 {
		fmt.Fprintln(w, "Parameters:")
		writeParameters(w, v.Parameters)
	}
}

func writeParameters(w io.Writer, ps []api.Parameter) {
	var rows [][]string
	for _, p := range ps {
		value := ""
		if p.Value != "" {
			value = "= " + p.Value
		}
		rows = append(rows, []string{p.Name, p.Type, value, p.Description})
	}
	writeTable(w, "  ", rows)
}

// writeTable prints rows in columns two spaces apart, without trailing spaces.
func writeTable(w io.Writer, indent string, rows [][]string) {
	var widths []int
	for _, row := range rows {
		for i, c := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len(c))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range row {
			b.WriteString(c)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-len(c)+2))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// writeOutputs prints outputs as "  Name = value" lines, under a header when title is set.
func writeOutputs(w io.Writer, title string, outs []api.Output) {
	indent := ""
	if title != "" {
		if len(outs) == 0 {
			return
		}
		fmt.Fprintln(w, title)
		indent = "  "
	}
	for _, o := range outs {
		fmt.Fprintf(w, "%s%s = %s\n", indent, o.Name, formatValue(o.Value, true))
	}
}

// writeStacks prints stack summaries as a table.
func writeStacks(w io.Writer, stacks []api.Stack, loc *time.Location) {
	if len(stacks) == 0 {
		fmt.Fprintln(w, "No stacks.")
		return
	}
	rows := [][]string{{"NAME", "STATUS", "UPDATED", "DESCRIPTION"}}
	for _, s := range stacks {
		rows = append(rows, []string{s.Name, s.Status, formatTime(s.UpdatedAt, loc), s.Description})
	}
	writeTable(w, "", rows)
}

func formatTime(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "-"
	}
	return t.In(loc).Format(time.DateTime)
}

// writeStack prints a stack's description.
func writeStack(w io.Writer, s api.Stack, loc *time.Location) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	status := s.Status
	if s.StatusReason != "" {
		status += " (" + s.StatusReason + ")"
	}
	rows := [][2]string{{"Name:", s.Name}, {"ID:", s.ID}, {"Dialect:", s.Dialect}, {"Status:", status},
		{"Description:", s.Description}, {"Operation:", s.Operation},
		{"Created:", formatTime(s.CreatedAt, loc)}, {"Updated:", formatTime(s.UpdatedAt, loc)}}
	for _, r := range rows {
		if r[1] != "" {
			fmt.Fprintf(tw, "%s\t%s\n", r[0], r[1])
		}
	}
	tw.Flush()
	if len(s.Parameters) > 0 {
		fmt.Fprintln(w, "Parameters:")
		writeParameters(w, s.Parameters)
	}
	if len(s.Resources) > 0 {
		fmt.Fprintln(w, "Resources:")
		rows := [][]string{{"LOGICAL ID", "TYPE", "STATUS", "PHYSICAL ID"}}
		for _, r := range s.Resources {
			status := r.Status
			if r.StatusReason != "" {
				status += " (" + r.StatusReason + ")"
			}
			rows = append(rows, []string{r.LogicalID, r.Type, status, r.PhysicalID})
		}
		writeTable(w, "  ", rows)
	}
	writeOutputs(w, "Outputs:", s.Outputs)
}
