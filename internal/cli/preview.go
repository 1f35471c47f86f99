package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (r *runner) previewCommand() *cobra.Command {
	var (
		sf    sourceFlags
		stack string
	)
	cmd := &cobra.Command{
		Use:   "preview [-f FILE|DIR] --stack NAME",
		Short: "Show what a deploy would change, without changing anything",
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&stack, "stack", "", "stack name (required)")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		if err := required("--stack", stack); err != nil {
			return err
		}
		src, err := r.readSource(&sf)
		if err != nil {
			return err
		}
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		p, err := c.Preview(ctx, stack, src.req)
		if err != nil {
			return err
		}
		if err := r.keepLock(src, p.LockFile); err != nil {
			return err
		}
		if !r.view().json {
			for _, d := range p.Diagnostics { // warnings: errors come as an api.Error
				fmt.Fprintln(r.env.Stderr, formatDiagnostic(d))
			}
		}
		return r.view().preview(p)
	})
	return cmd
}
