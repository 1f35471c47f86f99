// Package bench measures cairn against its peers. Run:
//
//	go test ./bench -run '^$' -bench . -benchtime 1x -count 5
//
// See README.md for the figures and how they were produced.
package bench

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/cairn-dev/cairn/internal/state"
)

// countingStore counts the bytes cairn hands to its state store, per kind of write: the
// figure that must stay flat per step as stacks grow.
type countingStore struct {
	state.Store
	bytes, writes atomic.Int64
}

func (c *countingStore) add(n int) {
	c.bytes.Add(int64(n))
	c.writes.Add(1)
}

func (c *countingStore) Append(ctx context.Context, e state.JournalEntry, ws ...state.Write) (int64, error) {
	n := len(e.Operation) + len(e.Stack) + len(e.Step) + len(e.Phase) + len(e.Token) + len(e.Detail) + 16
	for _, w := range ws {
		if r := w.Put; r != nil {
			n += len(r.Stack) + len(r.Name) + len(r.Type) + len(r.ID) + len(r.Status) + len(r.StatusReason) +
				len(r.Props) + len(r.Outputs) + len(r.DeletionPolicy) + 8
			for _, d := range r.Deps {
				n += len(d)
			}
		}
		n += len(w.Delete)
	}
	c.add(n)
	return c.Store.Append(ctx, e, ws...)
}

func (c *countingStore) AppendEvent(ctx context.Context, e state.Event) (int64, error) {
	c.add(len(e.Stack) + len(e.Operation) + len(e.LogicalID) + len(e.PhysicalID) + len(e.Type) + len(e.Status) + len(e.Reason) + 16)
	return c.Store.AppendEvent(ctx, e)
}

func (c *countingStore) PutStack(ctx context.Context, s state.Stack) error {
	c.add(len(s.Name) + len(s.ID) + len(s.Status) + len(s.StatusReason) + len(s.Parameters) + len(s.Outputs) + len(s.Description) + 32)
	return c.Store.PutStack(ctx, s)
}

func (c *countingStore) PutCustomRequest(ctx context.Context, r state.CustomRequest) (state.CustomRequest, bool, error) {
	c.add(len(r.ID) + len(r.Stack) + len(r.LogicalID) + len(r.Body) + 8)
	return c.Store.PutCustomRequest(ctx, r)
}

func (c *countingStore) MarkCustomRequestSent(ctx context.Context, id string) error {
	c.add(len(id) + 1)
	return c.Store.MarkCustomRequestSent(ctx, id)
}

func (c *countingStore) SaveCustomResponse(ctx context.Context, id string, body []byte, at time.Time) (bool, error) {
	c.add(len(id) + len(body) + 8)
	return c.Store.SaveCustomResponse(ctx, id, body, at)
}
