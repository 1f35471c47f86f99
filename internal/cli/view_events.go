package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/api"
)

// events prints a list of events: text lines, or a JSON array.
func (v view) events(evs []api.Event) error {
	if v.json {
		return writeJSON(v.w, nonNil(evs))
	}
	p := newEventPrinter(v.w, v.colour, v.loc)
	for _, ev := range evs {
		p.print(ev)
	}
	return nil
}

// eventStream returns a printer of events as they come: text lines, or one JSON object a
// line (events --follow).
func (v view) eventStream() func(api.Event) {
	if v.json {
		enc := json.NewEncoder(v.w)
		return func(ev api.Event) { _ = enc.Encode(ev) }
	}
	return newEventPrinter(v.w, v.colour, v.loc).print
}

// progress returns the printer of a deploy's or a delete's events: text lines, or nothing
// with JSON (which prints only the result).
func (v view) progress() func(api.Event) {
	if v.json {
		return func(api.Event) {}
	}
	return newEventPrinter(v.w, v.colour, v.loc).print
}

// eventPrinter prints events one line each: TIME  LOGICAL_ID  TYPE  STATUS  REASON. Columns
// start wide enough for most ids, types and statuses (UPDATE_ROLLBACK_IN_PROGRESS) and widen
// for longer ones (it streams, so widths only grow). With
// colour (a terminal) it starts with a header and colours statuses; without, the lines have
// the same content and no escape codes.
type eventPrinter struct {
	w          io.Writer
	colour     bool
	loc        *time.Location
	widths     [3]int // logical id, type, status
	headerDone bool
}

func newEventPrinter(w io.Writer, colour bool, loc *time.Location) *eventPrinter {
	return &eventPrinter{w: w, colour: colour, loc: loc, widths: [3]int{16, 26, 27}, headerDone: !colour}
}

func (p *eventPrinter) print(ev api.Event) {
	if !p.headerDone {
		p.headerDone = true
		fmt.Fprintln(p.w, paint(p.line("TIME    ", [3]string{"LOGICAL ID", "TYPE", "STATUS"}, "REASON", nil), ansiBold, true))
	}
	status := func(s string) string { return colourStatus(s, p.colour) }
	fmt.Fprintln(p.w, p.line(ev.Timestamp.In(p.loc).Format(time.TimeOnly), [3]string{ev.LogicalID, ev.Type, ev.Status}, ev.Reason, status))
}

// line lays out one line; paintStatus (when not nil) colours the status after it is padded
// so that escape codes do not count as width.
func (p *eventPrinter) line(at string, cols [3]string, reason string, paintStatus func(string) string) string {
	var b strings.Builder
	b.WriteString(at)
	for i, c := range cols {
		p.widths[i] = max(p.widths[i], len(c))
		pad := strings.Repeat(" ", p.widths[i]-len(c))
		if i == 2 {
			if paintStatus != nil {
				c = paintStatus(c)
			}
			if reason == "" {
				pad = ""
			}
		}
		b.WriteString("  " + c + pad)
	}
	if reason != "" {
		b.WriteString("  " + reason)
	}
	return b.String()
}
