package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/cairn-dev/cairn/api"
)

// stacks prints stack summaries: a table, or a JSON array.
func (v view) stacks(stacks []api.Stack) error {
	if v.json {
		return writeJSON(v.w, nonNil(stacks))
	}
	writeStacks(v.w, stacks, v.loc)
	return nil
}

// stack prints a stack's description: text, or the api.Stack as JSON.
func (v view) stack(s api.Stack) error {
	if v.json {
		return writeJSON(v.w, s)
	}
	writeStack(v.w, s, v.loc, v.colour)
	return nil
}

// outputs prints outputs: "Name = value" lines, or a JSON array.
func (v view) outputs(outs []api.Output) error {
	if v.json {
		return writeJSON(v.w, nonNil(outs))
	}
	writeOutputs(v.w, "", outs)
	return nil
}

// deployResult is what deploy prints with --output json.
type deployResult struct {
	Operation api.Operation `json:"operation"`
	Outputs   []api.Output  `json:"outputs"`
}

// deployed prints the end of a deploy: the outputs under a title, or with JSON the
// operation and the outputs as one object.
func (v view) deployed(op api.Operation, outs []api.Output) error {
	if v.json {
		return writeJSON(v.w, deployResult{Operation: op, Outputs: nonNil(outs)})
	}
	writeOutputs(v.w, "Outputs:", outs)
	return nil
}

// deleteResult is what delete prints with --output json.
type deleteResult struct {
	Operation api.Operation `json:"operation"`
}

// deleted prints the end of a delete: nothing more as text (the events said it all), the
// operation with JSON.
func (v view) deleted(op api.Operation) error {
	if v.json {
		return writeJSON(v.w, deleteResult{Operation: op})
	}
	return nil
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

// writeOutputs prints outputs as "Name = value" lines, indented under title when it is set
// (and nothing at all when there are none).
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

// writeStack prints a stack's description: a header of fields, then its parameters,
// resources and outputs.
func writeStack(w io.Writer, s api.Stack, loc *time.Location, colour bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	status := colourStatus(s.Status, colour)
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
		rows := [][]string{{"LOGICAL ID", "TYPE", "STATUS", "PHYSICAL ID", "REASON"}}
		for _, r := range s.Resources {
			physical := r.PhysicalID
			if physical == "" {
				physical = "-"
			}
			rows = append(rows, []string{r.LogicalID, r.Type, r.Status, physical, r.StatusReason})
		}
		writeTable(w, "  ", rows)
	}
	writeOutputs(w, "Outputs:", s.Outputs)
}
