package engine

import (
	"context"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/state"
)

// Observer receives what the engine measures, for metrics. Its methods must be quick and
// safe for concurrent use.
type Observer interface {
	// StepDone reports one provider call of a resource step: its kind (create, update,
	// delete, import, ...), the resource's type ("" when the step wrote no row), how long it
	// took since its begin was journalled and whether it failed.
	StepDone(kind, resourceType string, d time.Duration, failed bool)
	// OperationDone reports an operation this engine ran to its end.
	OperationDone(kind, status string, d time.Duration)
}

type noObserver struct{}

func (noObserver) StepDone(string, string, time.Duration, bool) {}
func (noObserver) OperationDone(string, string, time.Duration)  {}

// observeStep reports step key's provider call, timed from its begin entry.
func (r *run) observeStep(key string, failed bool, at time.Time, writes []state.Write) {
	var begun time.Time
	r.mu.Lock()
	for _, je := range r.journal[key] {
		if je.Phase == state.Begin {
			begun = je.At
		}
	}
	r.mu.Unlock()
	if begun.IsZero() {
		return
	}
	kind, name, _ := strings.Cut(key, "/")
	typ := ""
	for _, w := range writes {
		switch {
		case w.Put != nil:
			typ = w.Put.Type
		case w.Delete != "":
			typ = r.prior[w.Delete].Type // read-only once the run started
		}
	}
	if typ == "" {
		typ = r.prior[name].Type
	}
	r.e.o.Observer.StepDone(kind, typ, at.Sub(begun), failed)
}

// observeOperation reports operation id once it has ended.
func (e *Engine) observeOperation(id string) {
	if _, ok := e.o.Observer.(noObserver); ok {
		return
	}
	op, _, err := e.store.WatchOperation(context.Background(), id)
	if err != nil || op.Status == state.Running || op.EndedAt.IsZero() {
		return
	}
	e.o.Observer.OperationDone(op.Kind, op.Status, op.EndedAt.Sub(op.StartedAt))
}
