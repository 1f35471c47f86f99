package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/cairn-dev/cairn/api"
)

// preview prints a change set: text, or the api.PreviewResponse as JSON.
func (v view) preview(p api.PreviewResponse) error {
	if v.json {
		p.Changes = nonNil(p.Changes)
		return writeJSON(v.w, p)
	}
	if p.Dialect == "terraform" {
		if len(p.Drift) > 0 {
			writeDrift(v.w, p.Drift, v.colour)
			fmt.Fprintln(v.w, "Unless you have made equivalent changes to your configuration, or ignored the")
			fmt.Fprintln(v.w, "relevant attributes using ignore_changes, the following plan may include")
			fmt.Fprintln(v.w, "actions to undo or respond to these changes.")
			fmt.Fprintln(v.w)
			fmt.Fprintln(v.w, driftRule)
			fmt.Fprintln(v.w)
		}
		writePlan(v.w, p, v.colour)
		return nil
	}
	writePreview(v.w, p, v.colour)
	return nil
}

// previewSigns gives each action its sign and colour.
var previewSigns = map[string]struct{ sign, ansi string }{
	api.ActionAdd:    {"+", ansiGreen},
	api.ActionModify: {"~", ansiYellow},
	api.ActionRemove: {"-", ansiRed},
}

// writePreview prints the changes of a preview, one aligned line per resource
// ("+ Add", "~ Modify ... (replacement: Conditional)", "- Remove") with a "before → after"
// line per property below, then a count. Changes without an action are left out.
func writePreview(w io.Writer, p api.PreviewResponse, colour bool) {
	var changes []api.Change
	var idW, typeW int
	counts := map[string]int{}
	for _, c := range p.Changes {
		if c.Action == api.ActionNoop || c.Action == "" {
			continue
		}
		changes = append(changes, c)
		idW, typeW = max(idW, len(c.LogicalID)), max(typeW, len(c.Type))
		counts[c.Action]++
	}
	defer func() {
		writeOutputChanges(w, p.Outputs, colour)
		if len(p.Parameters) > 0 { // the values the deploy binds, those kept from the last one included
			fmt.Fprintln(w, "\nParameters:")
			writeParameters(w, p.Parameters)
		}
	}()
	if len(changes) == 0 {
		fmt.Fprintln(w, "No changes.")
		return
	}
	for _, c := range changes {
		s, ok := previewSigns[c.Action]
		if !ok {
			s.sign = "?"
		}
		head := paint(fmt.Sprintf("%s %-6s", s.sign, c.Action), s.ansi, colour)
		line := fmt.Sprintf("%s  %-*s  %-*s", head, idW, c.LogicalID, typeW, c.Type)
		if c.Replacement != "" && c.Action == api.ActionModify {
			line += "  (replacement: " + c.Replacement + ")"
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
		for _, d := range c.Details {
			fmt.Fprintf(w, "      %s: %s → %s\n", d.Name, formatValue(d.Before, false), formatValue(d.After, false))
		}
	}
	fmt.Fprintf(w, "\n%d to add, %d to modify, %d to remove.\n",
		counts[api.ActionAdd], counts[api.ActionModify], counts[api.ActionRemove])
}
