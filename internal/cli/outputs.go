package cli

import (
	"github.com/spf13/cobra"
)

func (r *runner) outputsCommand() *cobra.Command {
	var stack string
	cmd := &cobra.Command{
		Use:   "outputs --stack NAME",
		Short: "Print a stack's outputs",
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
		outs, err := c.Outputs(ctx, stack)
		if err != nil {
			return err
		}
		return r.view().outputs(outs)
	})
	return cmd
}
