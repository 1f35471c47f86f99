package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/client"
)

func (r *runner) deleteCommand() *cobra.Command {
	var (
		stack       string
		retain      []string
		timeout     time.Duration
		parallelism int
		yes         bool
	)
	cmd := &cobra.Command{
		Use:   "delete --stack NAME",
		Short: "Delete a stack and follow its events",
		Long: "Delete a stack and follow its events. On a terminal, delete lists what it will destroy and asks\n" +
			"first (--yes does not ask); it never asks when stdin or stdout is not a terminal, or with --output json.",
	}
	f := cmd.Flags()
	f.StringVar(&stack, "stack", "", "stack name (required)")
	f.StringArrayVar(&retain, "retain", nil, "logical id of a resource to keep instead of deleting (repeatable)")
	f.DurationVar(&timeout, "timeout", 0, "stack timeout, such as 30m (0: none)")
	f.IntVar(&parallelism, "parallelism", 0, "at most this many provider calls at once (0: the server's default, 64)")
	f.BoolVarP(&yes, "yes", "y", false, "do not ask before deleting (a delete only asks on a terminal)")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		if err := required("--stack", stack); err != nil {
			return err
		}
		secs, err := timeoutSeconds(timeout)
		if err != nil {
			return err
		}
		req := api.DeleteRequest{RetainResources: retain, TimeoutSeconds: secs, Parallelism: parallelism}
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		if !yes && r.interactive() {
			if err := r.askDelete(ctx, c, stack, retain); err != nil {
				return err
			}
		}
		op, err := r.start(ctx, c, stack, func() (api.Operation, error) { return c.Delete(ctx, stack, req) })
		if err != nil {
			return err
		}
		if err := r.view().deleted(op); err != nil {
			return err
		}
		return opFailed(op, "")
	})
	return cmd
}

// askDelete lists what deleting stack destroys and asks, as terraform destroy does.
func (r *runner) askDelete(ctx context.Context, c *client.Client, stack string, retain []string) error {
	st, err := c.Stack(ctx, stack)
	if err != nil {
		return err
	}
	kept := map[string]bool{}
	for _, name := range retain {
		kept[name] = true
	}
	fmt.Fprintf(r.env.Stdout, "Deleting stack %s (%s) destroys:\n", stack, st.Status)
	n := 0
	for _, res := range st.Resources {
		if kept[res.LogicalID] || res.PhysicalID == "" {
			continue
		}
		fmt.Fprintf(r.env.Stdout, "  - %s  %s  %s\n", res.LogicalID, res.Type, res.PhysicalID)
		n++
	}
	if n == 0 {
		fmt.Fprintln(r.env.Stdout, "  (no resources)")
	}
	if !r.confirm("Do you really want to delete stack "+stack+"?",
		"cairn will destroy the resources listed above (those a DeletionPolicy retains are kept). There is no undo.") {
		return &exitError{code: exitFailed, msg: "Delete cancelled."}
	}
	return nil
}
