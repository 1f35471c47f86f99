package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cairn-dev/cairn/api"
)

// writePlan prints a Terraform-language preview the way terraform plan does, so its users
// read it at a glance: one block per resource with a "+", "~", "-/+" or "-" sign per
// attribute, "(known after apply)" and "(sensitive value)", "# forces replacement", then the
// "Plan: N to add, N to change, N to destroy." line ("N to import, " first when import blocks
// adopt objects).
func writePlan(w io.Writer, p api.PreviewResponse, colour bool) {
	var imports, add, change, destroy int
	any := false
	for _, c := range p.Changes {
		var sign, verb, ansi string
		switch {
		case c.Action == api.ActionAdd:
			sign, verb, ansi = "+", "will be created", ansiGreen
			add++
		case c.Action == api.ActionModify && c.Replacement == api.ReplaceTrue:
			sign, verb, ansi = "-/+", "must be replaced", ansiYellow
			add++
			destroy++
		case c.Action == api.ActionModify:
			sign, verb, ansi = "~", "will be updated in-place", ansiYellow
			change++
		case c.Action == api.ActionRemove:
			sign, verb, ansi = "-", "will be destroyed", ansiRed
			destroy++
		case c.Action == api.ActionRead:
			sign, verb, ansi = "<=", "will be read during apply", ""
		case c.Action == api.ActionForget:
			sign, verb = ".", "will no longer be managed by Terraform, but will not be destroyed"
		case c.MovedFrom != "": // moved, nothing else to do
			sign, verb = "", "has moved to "+c.LogicalID
		case c.Importing != "": // imported, nothing else to do
			sign, verb = "", "will be imported"
		default:
			continue
		}
		any = true
		if c.Importing != "" {
			imports++
		}
		typ, name := splitAddress(c.LogicalID, c.Type)
		switch {
		case c.Action == api.ActionForget:
			fmt.Fprintf(w, " # %s %s\n # (destroy = false is set in the configuration)\n", c.LogicalID, verb)
		case c.MovedFrom != "" && c.Action == api.ActionNoop:
			fmt.Fprintf(w, "  # %s %s\n", c.MovedFrom, verb)
		default:
			fmt.Fprintf(w, "  # %s %s\n", c.LogicalID, verb)
			if c.MovedFrom != "" {
				fmt.Fprintf(w, "  # (moved from %s)\n", c.MovedFrom)
			}
			if c.Importing != "" && c.Action != api.ActionNoop {
				fmt.Fprintf(w, "  # (imported from %q)\n", c.Importing)
			}
			if c.Importing != "" && c.Replacement == api.ReplaceTrue {
				fmt.Fprintln(w, "  # Warning: this will destroy the imported resource")
			}
		}
		kind := "resource"
		if strings.HasPrefix(c.LogicalID, "data.") || strings.Contains(c.LogicalID, ".data.") {
			kind = "data"
		}
		fmt.Fprintf(w, "%s %s %q %q {\n", paint(fmt.Sprintf("%3s", sign), ansi, colour), kind, typ, name)
		width := 0
		for _, d := range c.Details {
			width = max(width, len(d.Name))
		}
		for _, d := range c.Details {
			fmt.Fprintln(w, planLine(c, d, width, colour))
		}
		fmt.Fprintln(w, "    }")
		fmt.Fprintln(w)
	}
	if !any && len(p.Outputs) == 0 {
		fmt.Fprintln(w, "No changes. Your infrastructure matches the configuration.")
		return
	}
	switch {
	case !any:
	case imports > 0:
		fmt.Fprintf(w, "Plan: %d to import, %d to add, %d to change, %d to destroy.\n", imports, add, change, destroy)
	default:
		fmt.Fprintf(w, "Plan: %d to add, %d to change, %d to destroy.\n", add, change, destroy)
	}
	writeOutputChanges(w, p.Outputs, colour)
}

// writeOutputChanges prints what a deploy does to the stack's outputs, as terraform's plan
// does ("Changes to Outputs:").
func writeOutputChanges(w io.Writer, outs []api.OutputChange, colour bool) {
	if len(outs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nChanges to Outputs:")
	width := 0
	for _, o := range outs {
		width = max(width, len(o.Name))
	}
	for _, o := range outs {
		var sign, text, ansi string
		switch o.Action {
		case api.ActionAdd:
			sign, text, ansi = "+", planValue(o.After), ansiGreen
		case api.ActionRemove:
			sign, text, ansi = "-", planValue(o.Before)+" -> null", ansiRed
		default:
			sign, text, ansi = "~", planValue(o.Before)+" -> "+planValue(o.After), ansiYellow
		}
		fmt.Fprintf(w, "  %s %-*s = %s\n", paint(sign, ansi, colour), width, o.Name, text)
	}
}

// planLine is one attribute of a planned change.
func planLine(c api.Change, d api.PropertyChange, width int, colour bool) string {
	before, after := planValue(d.Before), planValue(d.After)
	var sign, text, ansi string
	switch {
	case c.Action == api.ActionNoop: // an import that changes nothing shows the object as it is
		sign, text = " ", after
	case c.Action == api.ActionRemove || (d.After == nil && d.Before != nil):
		sign, text, ansi = "-", before+" -> null", ansiRed
		if c.Action == api.ActionRemove {
			text = before
		}
	case d.Before == nil:
		sign, text, ansi = "+", after, ansiGreen
	default:
		sign, text, ansi = "~", before+" -> "+after, ansiYellow
		if before == after {
			text = after
		}
	}
	line := fmt.Sprintf("    %s %-*s = %s", paint(sign, ansi, colour), width, d.Name, text)
	if d.ForcesReplacement {
		line += paint(" # forces replacement", ansiRed, colour)
	}
	return line
}

// planValue renders a value as terraform prints it: strings quoted, markers bare, collections
// as compact JSON.
func planValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if x == api.UnknownMarker || x == api.SensitiveMarker {
			return x
		}
		return fmt.Sprintf("%q", x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		if len(keys) == 0 {
			return "{}"
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%q = %s", k, planValue(x[k]))
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = planValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
}

// splitAddress returns the type and name labels of a resource instance address such as
// `module.m.time_static.t["a"]` (name `t["a"]` is printed as terraform's block label `t`).
func splitAddress(addr, typ string) (string, string) {
	i := strings.LastIndex(addr, typ+".")
	if i < 0 {
		return typ, addr
	}
	name := addr[i+len(typ)+1:]
	if j := strings.IndexByte(name, '['); j >= 0 {
		name = name[:j]
	}
	return typ, name
}
