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
	cmd.RunE = r.action(func(cmd *cobra.Command, _ []string) error {
		if stack == "" {
			return usagef("--stack is required")
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
		if r.output == "json" {
			return writeJSON(r.env.Stdout, st)
		}
		writeStack(r.env.Stdout, st, timeZone)
		return nil
	})
	return cmd
}
