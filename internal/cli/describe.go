package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/client"
)

func (r *runner) describeCommand() *cobra.Command {
	var stack string
	cmd := &cobra.Command{
		Use:   "describe --stack NAME",
		Short: "Show a stack: status, parameters, resources and outputs",
	}
	cmd.Flags().StringVar(&stack, "stack", "", "stack name (required)")
	cmd.RunE = r.stackAction(&stack, func(ctx context.Context, c *client.Client) error {
		st, err := c.Stack(ctx, stack)
		if err != nil {
			return err
		}
		return r.view().stack(st)
	})
	return cmd
}
