package cli

import (
	"github.com/spf13/cobra"
)

func (r *runner) stacksCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "stacks",
		Short: "List stacks",
	}
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		stacks, err := c.Stacks(ctx)
		if err != nil {
			return err
		}
		return r.view().stacks(stacks)
	})
	return cmd
}
