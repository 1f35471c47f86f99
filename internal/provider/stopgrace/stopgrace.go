// Package stopgrace runs a plugin call the way terraform and Pulumi's engine run one when the
// operation is cancelled: the call is not cut off; the plugin is asked to stop, and the call
// gets a grace period to return what it did before it is abandoned. Both plugin adapters
// (tfplugin, pulumirpc) use it, so they stop plugins alike.
package stopgrace

import (
	"context"
	"sync"
	"time"
)

// Default is how long a call whose context ended (Ctrl-C, a cancelled run) may still run after
// the plugin was asked to stop, before it is abandoned.
const Default = 30 * time.Second

// Or is grace, or Default when grace is not positive.
func Or(grace time.Duration) time.Duration {
	if grace > 0 {
		return grace
	}
	return Default
}

// Run runs fn on a context that ctx's end does not cancel. When ctx ends first, stop is called
// (it asks the plugin to stop; make it idempotent) and fn's context is cancelled grace later,
// abandoning a call the plugin does not end. Run returns fn's error; a caller that must report
// the cancellation checks ctx.Err() itself. A ctx already ended runs nothing.
func Run(ctx context.Context, grace time.Duration, stop func(), fn func(context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	callCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	var mu sync.Mutex
	var abandon *time.Timer
	stopWatching := context.AfterFunc(ctx, func() {
		mu.Lock()
		abandon = time.AfterFunc(Or(grace), cancel)
		mu.Unlock()
		stop()
	})
	err := fn(callCtx)
	stopWatching()
	mu.Lock()
	if abandon != nil {
		abandon.Stop()
	}
	mu.Unlock()
	return err
}
