package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/api"
)

func (r *runner) deleteCommand() *cobra.Command {
	var (
		stack   string
		retain  []string
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "delete --stack NAME",
		Short: "Delete a stack and follow its events",
	}
	f := cmd.Flags()
	f.StringVar(&stack, "stack", "", "stack name (required)")
	f.StringArrayVar(&retain, "retain", nil, "logical id of a resource to keep instead of deleting (repeatable)")
	f.DurationVar(&timeout, "timeout", 0, "stack timeout, such as 30m (0: none)")
	cmd.RunE = r.action(func(cmd *cobra.Command, _ []string) error {
		if stack == "" {
			return usagef("--stack is required")
		}
		if timeout < 0 {
			return usagef("--timeout must not be negative")
		}
		req := api.DeleteRequest{RetainResources: retain, TimeoutSeconds: int((timeout + time.Second - 1) / time.Second)}
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
		if r.output == "json" {
			if err := writeJSON(r.env.Stdout, struct {
				Operation api.Operation `json:"operation"`
			}{op}); err != nil {
				return err
			}
		}
		return opFailed(op)
	})
	return cmd
}
