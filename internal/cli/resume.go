package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/client"
)

// resumedHere reports, for the error of a command that starts an operation, whether the stack
// is busy with an operation this in-process cairn resumed on starting (a cairn process on the
// same directory was killed in the middle of it), and returns that operation.
func (r *runner) resumedHere(ctx context.Context, c *client.Client, stack string, err error) (api.Operation, bool) {
	var ae *api.Error
	if r.app == nil || !errors.As(err, &ae) || ae.Code != api.CodeStackBusy {
		return api.Operation{}, false
	}
	st, err := c.Stack(ctx, stack)
	if err != nil || st.Operation == "" || !r.app.RunsHere(ctx, st.Operation) {
		return api.Operation{}, false
	}
	op, err := c.Operation(ctx, st.Operation, 0)
	return op, err == nil
}

// finishResumed follows op, which a killed cairn left and this one resumed, to its end with its
// events, before the user's own command runs. A cancel (Ctrl-C) meanwhile stops there: the
// user's command does not run.
func (r *runner) finishResumed(ctx context.Context, c *client.Client, op api.Operation, after int64) error {
	fmt.Fprintf(r.env.Stderr, "cairn: the %s of stack %s (operation %s, started %s) was left running by a cairn process that ended;\n"+
		"cairn resumes it here and follows it to its end first, then runs this command.\n",
		op.Kind, op.Stack, op.ID, op.StartedAt.In(timeZone).Format("15:04:05"))
	r.cancelled.Store(false)
	ended, err := r.followPrinting(ctx, c, op, after)
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("cairn: the resumed %s of %s %s", ended.Kind, ended.Stack, ended.Status)
	if ended.StackStatus != "" {
		msg += " (" + ended.StackStatus + ")"
	}
	if r.cancelled.Load() {
		return &exitError{code: exitFailed, msg: msg + "; it was cancelled, so this command did not run"}
	}
	fmt.Fprintln(r.env.Stderr, msg)
	return nil
}
