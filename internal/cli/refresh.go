package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/api"
)

// refreshHelp says when cairn reads resources back, in the help of preview, deploy and refresh.
const refreshHelp = "cairn's state is the source of truth: by default preview and deploy plan against it and read\n" +
	"nothing back, one provider call per resource fewer than terraform plan. With --refresh (or\n" +
	"`cairn refresh`) every resource whose provider can read is read back through it first\n" +
	"(ReadResource), in any dialect, and what changed outside cairn is shown as drift. Custom resources\n" +
	"cannot be read back (their protocol has no Read): they are listed as not checked, as\n" +
	"CloudFormation's drift detection says NOT_CHECKED, and planned against the stored state."

func (r *runner) refreshCommand() *cobra.Command {
	var (
		sf    sourceFlags
		stack string
	)
	cmd := &cobra.Command{
		Use:   "refresh --stack NAME [-f DIR]",
		Short: "Read every resource back and store what changed outside cairn, changing nothing",
		Long: "Read every resource of a stack back through its provider (where it can read) and store what is\n" +
			"read, changing no real object, as terraform apply -refresh-only does: drift is shown attribute\n" +
			"by attribute, objects deleted outside cairn leave the stack (the next deploy creates them again),\n" +
			"data sources are read again and the outputs stored anew. The configuration is the one in -f DIR\n" +
			"(or the current directory when it has .tf files), else the one the stack was last deployed with.\n\n" +
			refreshHelp,
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&stack, "stack", "", "stack name (required)")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		if err := required("--stack", stack); err != nil {
			return err
		}
		var req api.RefreshRequest
		if sf.file != "" || hasTerraformFiles(".") {
			src, err := r.readSource(&sf)
			if err != nil {
				return err
			}
			req.Source = &src.req
		}
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		resp, err := c.Refresh(ctx, stack, req)
		if err != nil {
			return err
		}
		if !r.view().json {
			for _, d := range resp.Diagnostics {
				fmt.Fprintln(r.env.Stderr, formatDiagnostic(d))
			}
		}
		return r.view().refreshed(resp)
	})
	return cmd
}
