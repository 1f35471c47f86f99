package cli

import (
	"github.com/spf13/cobra"
)

func (r *runner) describeCommand() *cobra.Command {
	var stack string
	cmd := &cobra.Command{
		Use:   "describe --stack NAME",
		Short: "Show a stack: status, parameters, resources and outputs",
	}
	cmd.Flags().StringVar(&stack, "stack", "", "stack name (required)")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		if err := required("--stack", stack); err != nil {
			return err
		}
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		st, err := c.Stack(ctx, stack)
		if err != nil {
			return err
		}
		return r.view().stack(st)
	})
	return cmd
}
