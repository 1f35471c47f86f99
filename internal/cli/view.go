package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/api"
)

// view renders command results on w, as text or (json) as the API's values in indented
// JSON. Views only write; they decide nothing. The text renderers are in view_*.go.
type view struct {
	w      io.Writer
	json   bool
	colour bool           // text only: ANSI colours (stdout is a terminal)
	loc    *time.Location // text only: where times are shown
	clock  clock          // text only: heartbeats of a deploy's or a delete's steps
}

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// nonNil makes empty lists print as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

const (
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiBold   = "\x1b[1m"
	ansiReset  = "\x1b[0m"
)

// paint wraps s in an ANSI colour when colour is on.
func paint(s, ansi string, colour bool) string {
	if !colour || ansi == "" {
		return s
	}
	return ansi + s + ansiReset
}

// colourStatus colours a resource or stack status: red for failures and rollbacks, green
// for completion, yellow for work in progress.
func colourStatus(s string, colour bool) string {
	switch {
	case strings.HasSuffix(s, "FAILED") || strings.Contains(s, "ROLLBACK"):
		return paint(s, ansiRed, colour)
	case strings.HasSuffix(s, "_COMPLETE"):
		return paint(s, ansiGreen, colour)
	case strings.HasSuffix(s, "IN_PROGRESS"):
		return paint(s, ansiYellow, colour)
	}
	return s
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

func formatTime(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "-"
	}
	return t.In(loc).Format(time.DateTime)
}
