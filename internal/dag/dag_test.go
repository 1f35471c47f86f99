package dag

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCycle(t *testing.T) {
	cases := map[string]struct {
		reason string
		edges  map[string][]string
		want   []string
	}{
		"Acyclic":  {reason: "A chain has no cycle.", edges: map[string][]string{"a": {"b"}, "b": {"c"}, "c": nil}},
		"SelfLoop": {reason: "A self reference is ignored by Deps.", edges: map[string][]string{"a": {"a"}}},
		"Three": {reason: "The cycle is named from its smallest node.",
			edges: map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}},
			want:  []string{"a", "b", "c", "a"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := New()
			for _, id := range []string{"a", "b", "c", "d"} {
				if deps, ok := tc.edges[id]; ok {
					g.Add(id, deps...)
				}
			}
			if diff := cmp.Diff(tc.want, g.Cycle()); diff != "" {
				t.Errorf("%s\nCycle(): -want +got\n%s", tc.reason, diff)
			}
		})
	}
}

func TestWalkOrderAndSkips(t *testing.T) {
	g := New()
	g.Add("db")
	g.Add("app", "db")
	g.Add("dns", "app")
	g.Add("queue")
	g.Add("worker", "queue")
	var mu sync.Mutex
	var order []string
	out, errs := Walk(context.Background(), g, WalkOptions{Parallelism: 2}, func(_ context.Context, id string) error {
		mu.Lock()
		order = append(order, id)
		mu.Unlock()
		if id == "queue" {
			return errors.New("boom")
		}
		return nil
	})
	want := map[string]Outcome{"db": Done, "app": Done, "dns": Done, "queue": Failed, "worker": Skipped}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("Walk outcomes: -want +got\n%s", diff)
	}
	if errs["queue"] == nil || len(errs) != 1 {
		t.Errorf("Walk errors = %v, want only queue's", errs)
	}
	pos := map[string]int{}
	for i, id := range order {
		pos[id] = i
	}
	if !(pos["db"] < pos["app"] && pos["app"] < pos["dns"]) {
		t.Errorf("visit order %v breaks dependencies", order)
	}
}

func TestWalkBoundsParallelismAndStops(t *testing.T) {
	g := New()
	for i := range 50 {
		g.Add(string(rune('A' + i)))
	}
	var cur, peak atomic.Int32
	out, _ := Walk(context.Background(), g, WalkOptions{Parallelism: 4, StopOnFailure: true}, func(_ context.Context, id string) error {
		n := cur.Add(1)
		defer cur.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		if id == "E" {
			return errors.New("stop")
		}
		return nil
	})
	if peak.Load() > 4 {
		t.Errorf("peak parallelism %d > 4", peak.Load())
	}
	skipped := 0
	for _, o := range out {
		if o == Skipped {
			skipped++
		}
	}
	if skipped == 0 {
		t.Errorf("StopOnFailure: no node was skipped after the failure")
	}
}

func TestReverse(t *testing.T) {
	g := New()
	g.Add("a")
	g.Add("b", "a")
	r := g.Reverse()
	if diff := cmp.Diff([]string{"b"}, r.Deps("a")); diff != "" {
		t.Errorf("Reverse().Deps(a): -want +got\n%s", diff)
	}
}
