package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/cairn-dev/cairn/api"
)

// writeDrift prints what a refresh found changed outside cairn, as terraform prints "Objects
// have changed outside of Terraform": one block per resource, "has changed" with a "~" line
// per attribute, or "has been deleted" with a "-" line per attribute.
func writeDrift(w io.Writer, drift []api.Change, colour bool) {
	fmt.Fprintln(w, paint("Note: Objects have changed outside of cairn", ansiBold, colour))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "cairn detected the following changes made outside of cairn since the last")
	fmt.Fprintln(w, "\"cairn deploy\" which may have affected this plan:")
	for _, d := range drift {
		sign, verb, ansi, action := "~", "has changed", ansiYellow, api.ActionModify
		if d.Action == api.DriftDeleted {
			sign, verb, ansi, action = "-", "has been deleted", ansiRed, api.ActionModify
		}
		typ, name := splitAddress(d.LogicalID, d.Type)
		fmt.Fprintln(w)
		fmt.Fprintf(w, "  # %s %s\n", d.LogicalID, verb)
		fmt.Fprintf(w, "%s resource %q %q {\n", paint(fmt.Sprintf("%3s", sign), ansi, colour), typ, name)
		width := 0
		for _, pc := range d.Details {
			width = max(width, len(pc.Name))
		}
		for _, pc := range d.Details {
			fmt.Fprintln(w, planLine(api.Change{Action: action}, pc, width, colour))
		}
		fmt.Fprintln(w, "    }")
	}
	fmt.Fprintln(w)
}

// driftRule separates the drift from the plan, as terraform's horizontal rule does.
var driftRule = strings.Repeat("─", 77)

// refreshed prints the outcome of `cairn refresh`: the drift it stored and the outputs it
// changed, as terraform apply -refresh-only prints them; or the api.RefreshResponse as JSON.
func (v view) refreshed(resp api.RefreshResponse) error {
	if v.json {
		resp.Drift = nonNil(resp.Drift)
		return writeJSON(v.w, resp)
	}
	w := v.w
	if len(resp.NotChecked) > 0 {
		// CloudFormation's drift detection says NOT_CHECKED for these too.
		fmt.Fprintf(w, "Not checked: %s (%s).\n\n", strings.Join(resp.NotChecked, ", "), resp.Note)
	}
	if len(resp.Drift) == 0 && len(resp.OutputChanges) == 0 {
		fmt.Fprintln(w, "No changes. Your infrastructure still matches the configuration.")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "cairn has checked that the real remote objects still match the result of your")
		fmt.Fprintln(w, "most recent changes, and found no differences.")
		return nil
	}
	if len(resp.Drift) > 0 {
		writeDrift(w, resp.Drift, v.colour)
		fmt.Fprintln(w, "This is a refresh-only run, so cairn did not undo these: it recorded the")
		fmt.Fprintf(w, "updated values in the state of stack %s without changing any remote objects.\n", resp.Stack)
		fmt.Fprintln(w)
	}
	if len(resp.OutputChanges) > 0 {
		fmt.Fprintln(w, "Changes to Outputs:")
		width := 0
		for _, o := range resp.OutputChanges {
			width = max(width, len(o.Name))
		}
		for _, o := range resp.OutputChanges {
			fmt.Fprintln(w, planLine(api.Change{Action: api.ActionModify}, o, width, v.colour)[2:])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Refresh complete! Resources: %d changed outside of cairn.\n", len(resp.Drift))
	return nil
}
