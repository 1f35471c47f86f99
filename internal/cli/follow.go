package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/client"
)

// pollWait is how long one long poll of events waits. It bounds how late follow notices an
// operation that ends without a further event.
const pollWait = 5 * time.Second

// lastSeq returns the sequence number of stack's last event, 0 when it has none or does not
// exist.
func lastSeq(ctx context.Context, c *client.Client, stack string) (int64, error) {
	ev, _, err := c.LastEvent(ctx, stack)
	var ae *api.Error
	if errors.As(err, &ae) && ae.Code == api.CodeInvalidRequest {
		// A server older than events?latest=true: read the whole history instead.
		evs, lerr := c.Events(ctx, stack, 0, 0)
		if len(evs) > 0 {
			ev = evs[len(evs)-1]
		}
		err = lerr
	}
	if isNotFound(err) {
		return 0, nil
	}
	return ev.Seq, err
}

func isNotFound(err error) bool {
	var ae *api.Error
	return errors.As(err, &ae) && ae.Code == api.CodeNotFound
}

// follow passes the events of op's stack after seq to onEvent until op is no longer running,
// then returns op as it ended. When ctx ends first it returns r.interrupted().
func (r *runner) follow(ctx context.Context, c *client.Client, op api.Operation, after int64, onEvent func(api.Event)) (api.Operation, error) {
	for {
		evs, err := c.Events(ctx, op.Stack, after, pollWait)
		if ctx.Err() != nil {
			return op, r.interrupted()
		}
		if err != nil && !isNotFound(err) { // a deleted stack has no events any more
			return op, err
		}
		stackEnded := false
		for _, ev := range evs {
			onEvent(ev)
			after = ev.Seq
			stackEnded = stackEnded || (ev.LogicalID == op.Stack && !strings.HasSuffix(ev.Status, "IN_PROGRESS"))
		}
		wait := time.Duration(0)
		if stackEnded || err != nil {
			// The stack's final event comes just before the operation ends.
			wait = 5 * time.Second
		}
		cur, err := c.Operation(ctx, op.ID, wait)
		if ctx.Err() != nil {
			return op, r.interrupted()
		}
		if err != nil {
			return op, err
		}
		op = cur
		if op.Status != "running" {
			return op, r.drain(ctx, c, op.Stack, after, onEvent)
		}
	}
}

// drain passes the events left after seq to onEvent.
func (r *runner) drain(ctx context.Context, c *client.Client, stack string, after int64, onEvent func(api.Event)) error {
	for {
		evs, err := c.Events(ctx, stack, after, 0)
		if isNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			return nil
		}
		for _, ev := range evs {
			onEvent(ev)
			after = ev.Seq
		}
	}
}

// start runs begin (a deploy or a delete of stack) and follows the operation's events until it
// ends, printing them unless the output is JSON. In-process, an operation a killed cairn left
// running on the stack, which this cairn resumed on starting, is followed to its end first.
func (r *runner) start(ctx context.Context, c *client.Client, stack string, begin func() (api.Operation, error)) (api.Operation, error) {
	after, err := lastSeq(ctx, c, stack)
	if err != nil {
		return api.Operation{}, err
	}
	op, err := begin()
	for err != nil {
		left, ok := r.resumedHere(ctx, c, stack, err)
		if !ok {
			return api.Operation{}, err
		}
		if err := r.finishResumed(ctx, c, left, after); err != nil {
			return api.Operation{}, err
		}
		if after, err = lastSeq(ctx, c, stack); err != nil {
			return api.Operation{}, err
		}
		op, err = begin()
	}
	return r.followPrinting(ctx, c, op, after)
}

// followPrinting follows op from the event after seq to its end, printing its events. The
// first Ctrl-C (or SIGTERM, or SIGHUP) cancels the operation and goes on following it until it
// ends, so that the stack is left ended and recoverable; the second stops following.
func (r *runner) followPrinting(ctx context.Context, c *client.Client, op api.Operation, after int64) (api.Operation, error) {
	defer r.env.Interrupt.handle(func(sig os.Signal) {
		r.cancelled.Store(true)
		fmt.Fprintf(r.env.Stderr, received(sig)+"\n", "cancelling the operation and waiting for the providers to stop")
		if _, err := c.Cancel(context.WithoutCancel(ctx), op.Stack); err != nil {
			fmt.Fprintf(r.env.Stderr, "warning: cannot cancel: %s\n", err)
		}
	})()
	// The stack's resources as known now size the columns, so that they stay put.
	var known []api.Resource
	if st, err := c.StackBrief(ctx, op.Stack); err == nil {
		known = st.Resources
	}
	event, stop := r.view().progress(op.Stack, known)
	defer stop() // before the result is printed
	return r.follow(ctx, c, op, after, event)
}

// opFailed is the error (exit 1) for an operation that did not succeed or left its stack in
// a failed or rolled-back status (stackStatus, when op does not tell); nil otherwise.
func opFailed(op api.Operation, stackStatus string) error {
	if op.StackStatus != "" {
		stackStatus = op.StackStatus
	}
	if op.Status == "succeeded" && !stackFailed(stackStatus) {
		return nil
	}
	msg := fmt.Sprintf("error: %s of %s %s", op.Kind, op.Stack, op.Status)
	if op.Status == "succeeded" {
		msg = fmt.Sprintf("error: %s of %s ended", op.Kind, op.Stack)
	}
	if stackStatus != "" {
		msg += " (" + stackStatus + ")"
	}
	if op.StatusReason != "" {
		msg += ": " + op.StatusReason
	}
	return &exitError{code: exitFailed, msg: msg}
}

// stackFailed reports whether a stack status is a failure: *_FAILED or *ROLLBACK_COMPLETE.
func stackFailed(status string) bool {
	return strings.HasSuffix(status, "_FAILED") || strings.HasSuffix(status, "ROLLBACK_COMPLETE")
}
