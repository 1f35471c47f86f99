package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (r *runner) previewCommand() *cobra.Command {
	var (
		sf      sourceFlags
		stack   string
		refresh bool
		out     string
	)
	cmd := &cobra.Command{
		Use:   "preview [-f FILE|DIR] --stack NAME [--refresh] [--out FILE]",
		Short: "Show what a deploy would change, without changing anything",
		Long: "Show what a deploy would change, without changing anything. With --out, the plan is saved:\n" +
			"`cairn deploy --plan FILE` then applies exactly those steps, and refuses if the stack changed since.\n" +
			"The file holds the template and its parameters in clear (readable by you only), as terraform's do.\n\n" + refreshHelp,
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&stack, "stack", "", "stack name (required)")
	cmd.Flags().StringVar(&out, "out", "", "save the plan to FILE, for cairn deploy --plan FILE")
	cmd.Flags().BoolVar(&refresh, "refresh", false, "read every resource back through its provider first and plan against what is read (shows drift; nothing is stored)")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		if err := required("--stack", stack); err != nil {
			return err
		}
		src, err := r.readSource(&sf)
		if err != nil {
			return err
		}
		src.req.Refresh, src.req.SavePlan = refresh, out != ""
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
		if err := r.view().preview(p); err != nil {
			return err
		}
		if out == "" {
			return nil
		}
		if err := writePlanFile(out, stack, p); err != nil {
			return err
		}
		if !r.view().json {
			fmt.Fprintf(r.env.Stdout, "\nSaved the plan to: %s\n\nTo perform exactly these actions, run:\n    cairn deploy --plan %s\n", out, out)
		}
		return nil
	})
	return cmd
}
