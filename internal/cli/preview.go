package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/api"
)

func (r *runner) previewCommand() *cobra.Command {
	var (
		file, stack string
		params      []string
	)
	cmd := &cobra.Command{
		Use:   "preview -f FILE --stack NAME",
		Short: "Show what a deploy would change, without changing anything",
	}
	f := cmd.Flags()
	f.StringVarP(&file, "file", "f", "", "template file, - for stdin (required)")
	f.StringVar(&stack, "stack", "", "stack name (required)")
	f.StringArrayVarP(&params, "parameter", "p", nil, "template parameter KEY=VALUE (repeatable)")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		if err := required("--stack", stack); err != nil {
			return err
		}
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
		p, err := c.Preview(ctx, stack, api.DeployRequest{TemplateName: name, Template: text, Parameters: ps})
		if err != nil {
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
