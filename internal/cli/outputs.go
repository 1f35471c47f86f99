package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/client"
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
	cmd.RunE = r.stackAction(&stack, func(ctx context.Context, c *client.Client) error {
		get := c.Outputs
		if showSecrets {
			get = c.OutputsWithSecrets
		}
		outs, err := get(ctx, stack)
		if err != nil {
			return err
		}
		return r.view().outputs(outs)
	})
	return cmd
}
