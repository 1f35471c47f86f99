package stopgrace

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// A call whose context ends is asked to stop and left to finish: what it returns is kept.
func TestCallOutlivesItsContextWithinTheGrace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stops atomic.Int32
	stopped := make(chan struct{})
	err := Run(ctx, time.Hour, func() { stops.Add(1); close(stopped) }, func(callCtx context.Context) error {
		cancel()
		<-stopped // the plugin was asked to stop; it returns what it made
		if callCtx.Err() != nil {
			return errors.New("the call's own context ended within the grace")
		}
		return nil
	})
	if err != nil || stops.Load() != 1 {
		t.Errorf("err = %v, stops = %d; want nil, 1", err, stops.Load())
	}
}

// A call that ignores the stop is abandoned when the grace is over.
func TestCallIsAbandonedAfterTheGrace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	err := Run(ctx, time.Millisecond, func() {}, func(callCtx context.Context) error {
		cancel()
		<-callCtx.Done() // returns only when abandoned
		return callCtx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want the abandoned call's context.Canceled", err)
	}
}

// A context already ended runs nothing; an unended one never asks for a stop.
func TestRunWithoutCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Run(ctx, 0, func() { t.Error("stop called") }, func(context.Context) error { t.Error("ran"); return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	if err := Run(context.Background(), 0, func() { t.Error("stop called") }, func(context.Context) error { return nil }); err != nil {
		t.Errorf("err = %v", err)
	}
	if Or(0) != Default || Or(time.Second) != time.Second {
		t.Errorf("Or: %v %v", Or(0), Or(time.Second))
	}
}
