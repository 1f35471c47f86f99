package cli

import (
	"github.com/spf13/cobra"
)

func (r *runner) stacksCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "stacks",
		Short: "List stacks",
	}
	cmd.RunE = r.action(func(cmd *cobra.Command, _ []string) error {
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
		if r.output == "json" {
			return writeJSON(r.env.Stdout, nonNil(stacks))
		}
		writeStacks(r.env.Stdout, stacks, timeZone)
		return nil
	})
	return cmd
}
