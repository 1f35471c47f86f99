package cli

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/api"
)

// heartbeatEvery is how often a step still in progress gets a heartbeat line: terraform's
// "Still creating... [10s elapsed]" interval.
const heartbeatEvery = 10 * time.Second

// clock is the time a heartbeat reads: now (when an event is seen), and a ticker (its
// channel, which carries the time of each tick, and its stop). Tests give a fake one.
type clock struct {
	now  func() time.Time
	tick func(d time.Duration) (<-chan time.Time, func())
}

var realClock = clock{
	now: time.Now,
	tick: func(d time.Duration) (<-chan time.Time, func()) {
		t := time.NewTicker(d)
		return t.C, t.Stop
	},
}

// heartbeat prints a deploy's or a delete's events and, while a resource's step is in
// progress, a line every heartbeatEvery saying so: the resource's last event line with the
// time now and "Still creating... [10s elapsed]" as its reason (modifying, destroying,
// importing, reading). Elapsed time is measured client-side from when the CLI saw the step's
// IN_PROGRESS event; the stack's own events (stack) get no heartbeat.
//
// One goroutine (run) owns the printer and the steps: event and stop hand it work.
type heartbeat struct {
	p      *eventPrinter
	stack  string
	clock  clock
	steps  map[string]*step // logical id -> its step in progress
	events chan seen
	done   chan struct{}
}

// seen is an event and when the CLI saw it.
type seen struct {
	ev api.Event
	at time.Time
}

// step is a resource's step in progress: its IN_PROGRESS event, when the CLI saw it, and
// the elapsed time of its next heartbeat.
type step struct {
	ev    api.Event
	start time.Time
	next  time.Duration
}

func newHeartbeat(p *eventPrinter, stack string, c clock) *heartbeat {
	return &heartbeat{p: p, stack: stack, clock: c, steps: map[string]*step{}}
}

// start runs the heartbeat's goroutine; event then passes it events, and stop ends it once
// it has printed everything it was given.
func (h *heartbeat) start() (event func(api.Event), stop func()) {
	h.events, h.done = make(chan seen), make(chan struct{})
	go h.run()
	return func(ev api.Event) { h.events <- seen{ev, h.clock.now()} }, func() { close(h.events); <-h.done }
}

func (h *heartbeat) run() {
	defer close(h.done)
	// Ticking every second keeps each step's heartbeats within a second of its own 10 s
	// marks, as terraform's per-resource tickers do.
	ticks, stopTicker := h.clock.tick(time.Second)
	defer stopTicker()
	for {
		select {
		case s, ok := <-h.events:
			if !ok {
				return
			}
			h.event(s.ev, s.at)
		case now := <-ticks:
			h.beat(now)
		}
	}
}

// event prints ev and starts or ends the step of its resource.
func (h *heartbeat) event(ev api.Event, now time.Time) {
	h.p.print(ev)
	if ev.LogicalID == h.stack {
		return
	}
	if !strings.HasSuffix(ev.Status, "IN_PROGRESS") {
		delete(h.steps, ev.LogicalID)
		return
	}
	if s, ok := h.steps[ev.LogicalID]; ok && s.ev.Status == ev.Status {
		s.ev = ev // the same step goes on (a second CREATE_IN_PROGRESS, "Resource creation Initiated")
		return
	}
	h.steps[ev.LogicalID] = &step{ev: ev, start: now, next: heartbeatEvery}
}

// beat prints a heartbeat for each step that reached its next mark, oldest step first.
func (h *heartbeat) beat(now time.Time) {
	var due []*step
	for _, s := range h.steps {
		if now.Sub(s.start) >= s.next {
			due = append(due, s)
		}
	}
	slices.SortFunc(due, func(a, b *step) int {
		if c := a.start.Compare(b.start); c != 0 {
			return c
		}
		return strings.Compare(a.ev.LogicalID, b.ev.LogicalID)
	})
	for _, s := range due {
		elapsed := now.Sub(s.start).Truncate(time.Second)
		for s.next <= elapsed {
			s.next += heartbeatEvery
		}
		ev := s.ev
		ev.Timestamp = now
		ev.Reason = fmt.Sprintf("Still %s... [%s elapsed]", stepVerb(ev.Status), elapsed)
		h.p.print(ev)
	}
}

// stepVerb is terraform's word for what a step in status is doing.
func stepVerb(status string) string {
	switch op, _, _ := strings.Cut(status, "_"); op {
	case "CREATE":
		return "creating"
	case "UPDATE":
		return "modifying"
	case "DELETE":
		return "destroying"
	case "IMPORT":
		return "importing"
	case "READ", "REFRESH":
		return "reading"
	}
	return "working"
}
