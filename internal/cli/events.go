package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/client"
)

func (r *runner) eventsCommand() *cobra.Command {
	var (
		stack  string
		follow bool
	)
	cmd := &cobra.Command{
		Use:   "events --stack NAME",
		Short: "Print a stack's events, oldest first",
		Long: "Print a stack's events, oldest first. With --follow, keep printing new ones until\n" +
			"interrupted (exit 130), or until the stack is deleted or does not exist any more (exit 0,\n" +
			"after a line on stderr saying so); with --output json too, one JSON object a line.",
	}
	cmd.Flags().StringVar(&stack, "stack", "", "stack name (required)")
	cmd.Flags().BoolVar(&follow, "follow", false, "keep printing new events until interrupted or the stack is deleted")
	cmd.RunE = r.stackAction(&stack, func(ctx context.Context, c *client.Client) error {
		evs, err := c.Events(ctx, stack, 0, 0)
		if err != nil {
			return err
		}
		if !follow {
			return r.view().events(evs)
		}
		show := r.view().eventStream(evs)
		var after int64
		for {
			deleted := false
			for _, ev := range evs {
				show(ev)
				after = ev.Seq
				deleted = deleted || (ev.LogicalID == stack && ev.Status == "DELETE_COMPLETE")
			}
			if deleted {
				// The stack's own DELETE_COMPLETE (not a resource's that bears its name, nor a
				// stack already made again): nothing more will come.
				st, err := c.Stack(ctx, stack)
				switch {
				case isNotFound(err) || err == nil && st.Status == "DELETE_COMPLETE":
					fmt.Fprintf(r.env.Stderr, "stack %s was deleted (DELETE_COMPLETE): no more events\n", stack)
					return nil
				case ctx.Err() != nil:
					return &exitError{code: exitInterrupted}
				case err != nil:
					return err
				}
			}
			evs, err = c.Events(ctx, stack, after, pollWait)
			if ctx.Err() != nil {
				return &exitError{code: exitInterrupted}
			}
			if isNotFound(err) {
				fmt.Fprintf(r.env.Stderr, "stack %s does not exist any more: no more events\n", stack)
				return nil
			}
			if err != nil {
				return err
			}
		}
	})
	return cmd
}
