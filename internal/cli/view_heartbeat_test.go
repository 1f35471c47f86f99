package cli

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
)

func TestHeartbeat(t *testing.T) {
	t0 := time.Date(2025, 1, 2, 15, 4, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	ev := func(id, status string) api.Event {
		return api.Event{LogicalID: id, Type: "Custom::X", Status: status, Timestamp: t0}
	}
	// Each step is an event seen at a time, or a tick (a zero event) at a time.
	type step struct {
		at int
		ev api.Event
	}
	tick := func(s int) step { return step{at: s} }
	tests := map[string]struct {
		reason string
		steps  []step
		want   []string // the reasons printed, in order
	}{
		"EveryTenSeconds": {
			reason: "A step in progress gets a heartbeat at 10 s, 20 s, ... of its own, not on every tick.",
			steps:  []step{{0, ev("A", "CREATE_IN_PROGRESS")}, tick(9), tick(10), tick(11), tick(20), {25, ev("A", "CREATE_COMPLETE")}, tick(30)},
			want:   []string{"", "Still creating... [10s elapsed]", "Still creating... [20s elapsed]", ""},
		},
		"Verbs": {
			reason: "Updates modify, deletes destroy, imports import, as terraform says.",
			steps:  []step{{0, ev("U", "UPDATE_IN_PROGRESS")}, {1, ev("D", "DELETE_IN_PROGRESS")}, {2, ev("I", "IMPORT_IN_PROGRESS")}, tick(12)},
			want:   []string{"", "", "", "Still modifying... [12s elapsed]", "Still destroying... [11s elapsed]", "Still importing... [10s elapsed]"},
		},
		"StackHasNone": {
			reason: "The stack's own IN_PROGRESS event gets no heartbeat.",
			steps:  []step{{0, ev("web", "UPDATE_IN_PROGRESS")}, tick(10)},
			want:   []string{""},
		},
		"SameStepKeepsItsStart": {
			reason: "A second IN_PROGRESS event of the same step does not restart its clock; a new kind of step does.",
			steps: []step{{0, ev("A", "CREATE_IN_PROGRESS")}, {5, ev("A", "CREATE_IN_PROGRESS")}, tick(10),
				{12, ev("A", "DELETE_IN_PROGRESS")}, tick(20), tick(22)},
			want: []string{"", "", "Still creating... [10s elapsed]", "", "Still destroying... [10s elapsed]"},
		},
		"LateTickCatchesUp": {
			reason: "A late tick prints the elapsed time it sees, once, and the next mark follows it.",
			steps:  []step{{0, ev("A", "CREATE_IN_PROGRESS")}, tick(25), tick(29), tick(30)},
			want:   []string{"", "Still creating... [25s elapsed]", "Still creating... [30s elapsed]"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			// The reason starts after TIME, LOGICAL ID, TYPE and STATUS at their default widths.
			reasonAt := len("15:04:05") + 2 + defaultWidths[0] + 2 + defaultWidths[1] + 2 + defaultWidths[2] + 2
			p := newEventPrinter(writerFunc(func(b []byte) {
				line := strings.TrimSuffix(string(b), "\n")
				got = append(got, line[min(reasonAt, len(line)):])
			}), false, time.UTC)
			h := newHeartbeat(p, "web", clock{})
			for _, s := range tc.steps {
				if s.ev.LogicalID == "" {
					h.beat(at(s.at))
				} else {
					h.event(s.ev, at(s.at))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

type writerFunc func([]byte)

func (f writerFunc) Write(b []byte) (int, error) { f(b); return len(b), nil }

// fakeClock is a clock whose time moves only when the test says (set), and whose ticker
// ticks only when the test sends a time on ticks.
type fakeClock struct {
	mu    sync.Mutex
	t     time.Time
	ticks chan time.Time
}

func (c *fakeClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func (c *fakeClock) clock() clock {
	return clock{
		now:  func() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t },
		tick: func(time.Duration) (<-chan time.Time, func()) { return c.ticks, func() {} },
	}
}

func TestProgressHeartbeatLines(t *testing.T) {
	t0 := time.Date(2025, 1, 2, 15, 4, 0, 0, time.UTC)
	fc := &fakeClock{t: t0, ticks: make(chan time.Time)}
	var b strings.Builder
	v := view{w: &b, loc: time.UTC, clock: fc.clock()}
	event, stop := v.progress("web", nil)
	event(api.Event{LogicalID: "aws_instance.web", Type: "aws_instance", Status: "CREATE_IN_PROGRESS", Timestamp: t0})
	fc.ticks <- t0.Add(10 * time.Second)
	fc.set(t0.Add(12 * time.Second))
	event(api.Event{LogicalID: "aws_instance.web", Type: "aws_instance", Status: "CREATE_COMPLETE", Timestamp: t0.Add(12 * time.Second)})
	stop()
	want := "" +
		"15:04:00  aws_instance.web  aws_instance                CREATE_IN_PROGRESS\n" +
		"15:04:10  aws_instance.web  aws_instance                CREATE_IN_PROGRESS           Still creating... [10s elapsed]\n" +
		"15:04:12  aws_instance.web  aws_instance                CREATE_COMPLETE\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("a step in progress for 10 s gets a heartbeat line in the event table: -want +got:\n%s", diff)
	}

	b.Reset()
	v.json = true
	event, stop = v.progress("web", nil)
	event(api.Event{LogicalID: "a", Status: "CREATE_IN_PROGRESS"})
	stop()
	if b.String() != "" {
		t.Errorf("-o json prints no events and no heartbeat while following, got %q", b.String())
	}
}
