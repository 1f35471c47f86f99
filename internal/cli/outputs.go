package cli

import (
	"github.com/spf13/cobra"
)

func (r *runner) outputsCommand() *cobra.Command {
	var stack string
	var showSecrets bool
	cmd := &cobra.Command{
		Use:   "outputs --stack NAME",
		Short: "Print a stack's outputs",
		Long: "Print a stack's outputs. Secrets (sensitive outputs, values from NoEcho parameters or NoEcho\n" +
			"custom-resource data) show as **** unless --show-secrets asks for their values.",
	}
	cmd.Flags().StringVar(&stack, "stack", "", "stack name (required)")
	cmd.Flags().BoolVar(&showSecrets, "show-secrets", false, "print the values of secret outputs instead of ****")
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
		if showSecrets {
			outs, err = c.OutputsWithSecrets(ctx, stack)
		}
		if err != nil {
			return err
		}
		return r.view().outputs(outs)
	})
	return cmd
}
