package cli

import (
	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/api"
)

func (r *runner) validateCommand() *cobra.Command {
	var (
		file   string
		params []string
	)
	cmd := &cobra.Command{
		Use:   "validate -f FILE",
		Short: "Check a template and its parameters",
		Long: "Check a template and its parameters. Prints every diagnostic and exits 1 if any is an\n" +
			"error; otherwise prints \"template is valid\" and the declared parameters.",
	}
	f := cmd.Flags()
	f.StringVarP(&file, "file", "f", "", "template file, - for stdin (required)")
	f.StringArrayVarP(&params, "parameter", "p", nil, "template parameter KEY=VALUE (repeatable)")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		ps, err := parseParameters(params)
		if err != nil {
			return err
		}
		name, text, err := r.readTemplate(file)
		if err != nil {
			return err
		}
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		v, err := c.Validate(ctx, api.ValidateRequest{TemplateName: name, Template: text, Parameters: ps})
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
