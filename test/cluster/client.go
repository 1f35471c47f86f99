package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/client"
)

// Retried sends a deploy or delete through the load balancer until an operation runs for the
// stack, and returns its id: a request that died with its replica is sent again, and a stack
// found busy is followed instead (the first request did start it).
func Retried(ctx context.Context, c *client.Client, stack string, send func() (api.Operation, error)) (string, error) {
	for {
		op, err := send()
		if err == nil {
			return op.ID, nil
		}
		var ae *api.Error
		if errors.As(err, &ae) && ae.Code == api.CodeStackBusy {
			st, serr := c.StackBrief(ctx, stack)
			if serr == nil && st.Operation != "" {
				return st.Operation, nil
			}
		} else if errors.As(err, &ae) && ae.Code != api.CodeInternal {
			return "", err // refused for good; transport errors and 500s (the database restarting) are retried
		}
		if ctx.Err() != nil {
			return "", err
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// Wait follows operation id until it ends, through whichever replica answers.
func Wait(ctx context.Context, c *client.Client, id string) (api.Operation, error) {
	for {
		op, err := c.Operation(ctx, id, 20*time.Second)
		if err == nil && op.Status != "running" {
			return op, nil
		}
		if ctx.Err() != nil {
			return op, fmt.Errorf("operation %s: %w (last error %v)", id, ctx.Err(), err)
		}
		if err != nil {
			time.Sleep(300 * time.Millisecond)
		}
	}
}
