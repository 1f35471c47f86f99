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
	p.fit(eventColumns(evs))
	for _, ev := range evs {
		p.print(ev)
	}
	return nil
}

// eventStream returns a printer of events as they come: text lines, or one JSON object a
// line (events --follow). The text columns are sized for known, the events already there.
func (v view) eventStream(known []api.Event) func(api.Event) {
	if v.json {
		enc := json.NewEncoder(v.w)
		return func(ev api.Event) { _ = enc.Encode(ev) }
	}
	p := newEventPrinter(v.w, v.colour, v.loc)
	p.fit(eventColumns(known))
	return p.print
}

// progress returns the printer of a deploy's or a delete's events on stack and the stop
// that must follow the last one: text lines with heartbeats for steps in progress (see
// heartbeat), or nothing with JSON (which prints only the result). The text columns are
// sized for the stack's known resources.
func (v view) progress(stack string, known []api.Resource) (event func(api.Event), stop func()) {
	if v.json {
		return func(api.Event) {}, func() {}
	}
	p := newEventPrinter(v.w, v.colour, v.loc)
	p.fit(resourceColumns(known))
	return newHeartbeat(p, stack, v.clock).start()
}

// Column widths of the event lines: they start at defaultWidths (enough for most ids,
// types and statuses, UPDATE_ROLLBACK_IN_PROGRESS included), widen to fit the ids and types
// known before the first line, up to maxWidths, and then never change: a longer value
// overflows its own line and leaves the columns of the others where they were.
var (
	defaultWidths = [3]int{16, 26, 27} // logical id, type, status
	maxWidths     = [3]int{40, 40, 27}
)

// eventPrinter prints events one line each: TIME  LOGICAL_ID  TYPE  STATUS  REASON, in
// columns that do not move once printing starts (see defaultWidths). With colour (a
// terminal) it starts with a header and colours statuses; without, the lines have the same
// content and no escape codes.
type eventPrinter struct {
	w          io.Writer
	colour     bool
	loc        *time.Location
	widths     [3]int // logical id, type, status
	headerDone bool
	started    bool // a line was printed: widths are fixed
}

func newEventPrinter(w io.Writer, colour bool, loc *time.Location) *eventPrinter {
	return &eventPrinter{w: w, colour: colour, loc: loc, widths: defaultWidths, headerDone: !colour}
}

// fit widens the columns for values (logical id, type, status triples), up to maxWidths.
// It does nothing once a line was printed.
func (p *eventPrinter) fit(values [][3]string) {
	if p.started {
		return
	}
	for _, v := range values {
		for i, c := range v {
			p.widths[i] = max(p.widths[i], min(len(c), maxWidths[i]))
		}
	}
}

func eventColumns(evs []api.Event) [][3]string {
	out := make([][3]string, len(evs))
	for i, ev := range evs {
		out[i] = [3]string{ev.LogicalID, ev.Type, ev.Status}
	}
	return out
}

func resourceColumns(rs []api.Resource) [][3]string {
	out := make([][3]string, len(rs))
	for i, r := range rs {
		out[i] = [3]string{r.LogicalID, r.Type, r.Status}
	}
	return out
}

func (p *eventPrinter) print(ev api.Event) {
	p.started = true
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
		pad := strings.Repeat(" ", max(p.widths[i]-len(c), 0))
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
