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
	}
	f := cmd.Flags()
	f.StringVarP(&file, "file", "f", "", "template file (required)")
	f.StringArrayVarP(&params, "parameter", "p", nil, "template parameter KEY=VALUE (repeatable)")
	cmd.RunE = r.action(func(cmd *cobra.Command, _ []string) error {
		ps, err := parseParameters(params)
		if err != nil {
			return err
		}
		name, text, err := readTemplate(file)
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
		if r.output == "json" {
			err = writeJSON(r.env.Stdout, v)
		} else {
			writeValidate(r.env.Stdout, v)
		}
		if err == nil && !v.Valid {
			return &exitError{code: exitFailed}
		}
		return err
	})
	return cmd
}
