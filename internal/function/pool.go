package function

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// pool holds a function's warm processes: at most def.Concurrency, each running one
// invocation at a time. An invocation takes an idle process or starts one; beyond the limit it
// waits for a slot. A process that timed out, crashed or was cancelled is killed and dropped;
// the next invocation that needs one starts a replacement.
type pool struct {
	m   *Manager
	def Definition
	sem chan struct{} // one token per invocation in progress

	mu      sync.Mutex
	idle    []*worker
	workers map[*worker]struct{}
	closed  bool
}

func newPool(m *Manager, d Definition) *pool {
	return &pool{m: m, def: d, sem: make(chan struct{}, d.Concurrency), workers: map[*worker]struct{}{}}
}

// maxRedeliveries bounds how often an invocation moves on from an idle process that turned
// out to have exited (aws-lambda-go exits right after reporting a panic).
const maxRedeliveries = 3

// invoke runs inv and returns its result; the error is ctx's or ErrClosed.
func (p *pool) invoke(ctx context.Context, inv *invocation) (Result, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	defer func() { <-p.sem }()
	if p.def.Kind == KindURL {
		return p.m.invokeURL(ctx, p.def, inv), nil
	}
	for attempt := 0; ; attempt++ {
		w, fresh, err := p.take(inv)
		if errors.Is(err, ErrClosed) {
			return Result{}, err
		}
		if err != nil {
			fe := &FuncError{Type: "Runtime.InvalidEntrypoint", Message: err.Error()}
			p.log(inv, "START RequestId: %s%s", inv.id, inv.forEvent())
			p.log(inv, "ERROR RequestId: %s %s", inv.id, fe.Message)
			return Result{RequestID: inv.id, Payload: marshalError(fe), Error: fe}, nil
		}
		if attempt == 0 {
			p.log(inv, "START RequestId: %s Version: $LATEST%s", inv.id, inv.forEvent())
		}
		r, ok, err := w.run(ctx, inv)
		if errors.Is(err, errNotDelivered) && !fresh && attempt < maxRedeliveries {
			p.drop(w)
			continue
		}
		if errors.Is(err, errNotDelivered) {
			r, err = w.crashed(inv), nil
		}
		if ok && w.alive() {
			p.put(w)
		} else {
			p.drop(w)
		}
		if err != nil {
			p.log(inv, "END RequestId: %s (%s)", inv.id, err)
			return Result{}, err
		}
		if r.Error != nil {
			p.log(inv, "ERROR RequestId: %s %s", inv.id, r.Error)
		}
		p.log(inv, "END RequestId: %s", inv.id)
		p.log(inv, "REPORT RequestId: %s Duration: %.2f ms Memory Size: %d MB", inv.id,
			float64(r.Duration.Microseconds())/1000, p.def.MemoryMB)
		return r, nil
	}
}

func (p *pool) log(inv *invocation, format string, args ...any) {
	p.m.logs.write(p.def.key(), inv.entry("cairn", fmt.Sprintf(format, args...)))
}

// take returns an idle live process, or a new one started for inv (its init output is logged
// under inv); fresh reports the latter.
func (p *pool) take(inv *invocation) (w *worker, fresh bool, err error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, false, ErrClosed
	}
	for len(p.idle) > 0 {
		w = p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if w.alive() {
			p.mu.Unlock()
			return w, false, nil
		}
		delete(p.workers, w)
	}
	p.mu.Unlock()
	w, err = startWorker(p, inv)
	if err != nil {
		return nil, false, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		go w.kill()
		return nil, false, ErrClosed
	}
	p.workers[w] = struct{}{}
	return w, true, nil
}

func (p *pool) put(w *worker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		go w.kill()
		return
	}
	p.idle = append(p.idle, w)
}

func (p *pool) drop(w *worker) {
	p.mu.Lock()
	delete(p.workers, w)
	p.mu.Unlock()
	w.kill()
}

// size is the number of live processes.
func (p *pool) size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for w := range p.workers {
		if w.alive() {
			n++
		}
	}
	return n
}

// close kills every process; invocations in progress fail.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	ws := make([]*worker, 0, len(p.workers))
	for w := range p.workers {
		ws = append(ws, w)
	}
	p.workers, p.idle = map[*worker]struct{}{}, nil
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(w.kill)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
}
