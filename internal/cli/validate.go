package cli

import (
	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/api"
)

func (r *runner) validateCommand() *cobra.Command {
	var sf sourceFlags
	cmd := &cobra.Command{
		Use:   "validate [-f FILE|DIR]",
		Short: "Check a template and its parameters",
		Long: "Check a template and its parameters. Prints every diagnostic and exits 1 if any is an\n" +
			"error; otherwise prints \"template is valid\" and the declared parameters.",
	}
	sf.register(cmd)
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		src, err := r.readSource(&sf)
		if err != nil {
			return err
		}
		d := src.req
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		v, err := c.Validate(ctx, api.ValidateRequest{TemplateName: d.TemplateName, Template: d.Template, Files: d.Files,
			VarFiles: d.VarFiles, Env: d.Env, Parameters: d.Parameters})
		if err != nil {
			return err
		}
		if err := r.view().validate(v); err != nil {
			return err
		}
		if !v.Valid || hasErrors(v.Diagnostics) {
			return &exitError{code: exitFailed}
		}
		return nil
	})
	return cmd
}
