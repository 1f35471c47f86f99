package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/api"
)

func (r *runner) deleteCommand() *cobra.Command {
	var (
		stack       string
		retain      []string
		timeout     time.Duration
		parallelism int
	)
	cmd := &cobra.Command{
		Use:   "delete --stack NAME",
		Short: "Delete a stack and follow its events",
	}
	f := cmd.Flags()
	f.StringVar(&stack, "stack", "", "stack name (required)")
	f.StringArrayVar(&retain, "retain", nil, "logical id of a resource to keep instead of deleting (repeatable)")
	f.DurationVar(&timeout, "timeout", 0, "stack timeout, such as 30m (0: none)")
	f.IntVar(&parallelism, "parallelism", 0, "at most this many provider calls at once (0: the server's default, 64)")
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
