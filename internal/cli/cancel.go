package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/client"
)

func (r *runner) cancelCommand() *cobra.Command {
	var (
		stack      string
		force, yes bool
	)
	cmd := &cobra.Command{
		Use:   "cancel --stack NAME [--force [--yes]]",
		Short: "Cancel the running operation of a stack, or end it at once with --force",
		Long: "Cancel the running operation of a stack, as CancelUpdateStack does: the providers are told to\n" +
			"stop, nothing new starts, a CloudFormation or ROS stack rolls back, and cairn follows the stack\n" +
			"to its end. This works for an operation whose cairn process is gone too (killed, its terminal\n" +
			"closed): in-process, the command takes the operation over and cancels it.\n\n" +
			"--force ends the operation at once instead, as `terraform force-unlock` drops a state lock:\n" +
			"whoever runs it is stopped, nothing is rolled back, and the stack is left in the failed status\n" +
			"of the operation, with an event naming who forced it and the steps that were in flight. Its\n" +
			"state may then not match its resources. It asks for confirmation (only 'yes' confirms) unless\n" +
			"--yes is given, and refuses without --yes when stdin is not a terminal.",
	}
	f := cmd.Flags()
	f.StringVar(&stack, "stack", "", "stack name (required)")
	f.BoolVar(&force, "force", false, "end the operation at once, without rollback, even if a cairn process still runs it")
	f.BoolVar(&yes, "yes", false, "with --force: do not ask for confirmation")
	cmd.RunE = r.stackAction(&stack, func(ctx context.Context, c *client.Client) error {
		if yes && !force {
			return usagef("--yes goes with --force")
		}
		if force {
			return r.forceUnlock(ctx, c, stack, yes)
		}
		return r.cancel(ctx, c, stack)
	})
	return cmd
}

// cancel cancels the stack's operation and follows it to its end.
func (r *runner) cancel(ctx context.Context, c *client.Client, stack string) error {
	after, err := lastSeq(ctx, c, stack)
	if err != nil {
		return err
	}
	op, err := c.Cancel(ctx, stack)
	if err != nil {
		return busyElsewhere(err, stack)
	}
	if op.Status == "running" && !r.view().json {
		fmt.Fprintf(r.env.Stderr, "Cancelling the %s of %s (operation %s); following it to its end...\n", op.Kind, stack, op.ID)
		if st, err := c.Stack(ctx, stack); err == nil && strings.Contains(st.Status, "ROLLBACK_IN_PROGRESS") {
			fmt.Fprintf(r.env.Stderr, "It is rolling back already, and a rollback is not cancelled: Ctrl-C stops following it, "+
				"and `cairn cancel --stack %s --force` ends it at once, without finishing the rollback.\n", stack)
		}
	}
	ended, err := r.followPrinting(ctx, c, op, after)
	if err != nil {
		return err
	}
	return r.printEnded(ended, "")
}

// forceUnlock ends the stack's operation at once, after the user confirms.
func (r *runner) forceUnlock(ctx context.Context, c *client.Client, stack string, yes bool) error {
	st, err := c.Stack(ctx, stack)
	if err != nil {
		return err
	}
	if st.Operation == "" {
		return fmt.Errorf("stack %s has no running operation to unlock (it is %s)", stack, st.Status)
	}
	op, err := c.Operation(ctx, st.Operation, 0)
	if err != nil {
		return err
	}
	if !yes {
		if !r.env.IsTerminal(r.env.Stdin) {
			return usagef("refusing to force-unlock stack %s without confirmation: stdin is not a terminal; add --yes", stack)
		}
		ok, err := r.confirmForce(op)
		if err != nil {
			return err
		}
		if !ok {
			return &exitError{code: exitFailed, msg: "Force-unlock cancelled: the operation goes on."}
		}
	}
	ended, err := c.ForceUnlock(ctx, stack, whoForces(r.env.Getenv))
	if err != nil {
		return err
	}
	return r.printEnded(ended, "Stack "+stack+" has been unlocked: the operation was ended without rollback.\n\n"+
		"Its resources may not match its state; deploy or delete the stack to go on.\n")
}

// confirmForce asks, as terraform force-unlock does, and reports whether the answer is "yes".
func (r *runner) confirmForce(op api.Operation) (bool, error) {
	fmt.Fprintf(r.env.Stderr, "Do you really want to force-unlock stack %s?\n"+
		"  cairn will end its %s (operation %s, started %s) where it stands, without rolling\n"+
		"  back, even if a cairn process is still running it. Whatever that operation was changing\n"+
		"  may exist without cairn knowing. Only 'yes' will be accepted to confirm.\n\n"+
		"  Enter a value: ", op.Stack, op.Kind, op.ID, formatTime(op.StartedAt, timeZone))
	yes, err := answeredYes(r.env.Stdin)
	if err != nil {
		return false, err
	}
	fmt.Fprintln(r.env.Stderr)
	return yes, nil
}

// printEnded prints how a cancelled or force-unlocked operation ended: note (text only),
// then its status, or the operation in JSON.
func (r *runner) printEnded(op api.Operation, note string) error {
	if r.view().json {
		return writeJSON(r.env.Stdout, op)
	}
	fmt.Fprint(r.env.Stdout, note)
	line := fmt.Sprintf("Operation %s (%s) ended %s", op.ID, op.Kind, op.Status)
	if op.StackStatus != "" {
		line += "; stack " + op.Stack + " is " + op.StackStatus
	}
	_, err := fmt.Fprintln(r.env.Stdout, line+".")
	return err
}

// busyElsewhere explains a cancel refused because another live cairn runs the operation.
func busyElsewhere(err error, stack string) error {
	var ae *api.Error
	if errors.As(err, &ae) && ae.Code == api.CodeStackBusy {
		return fmt.Errorf("%s: another cairn still runs it (a server, or a CLI process that is alive): cancel it there "+
			"(Ctrl-C), or end it at once, without rollback, with `cairn cancel --stack %s --force`", ae.Message, stack)
	}
	return err
}

// whoForces names the user forcing an unlock in the stack's event: USER@HOST.
func whoForces(getenv func(string) string) string {
	name := getenv("USER")
	if name == "" {
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s@%s (cairn cancel --force)", name, host)
}
