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
	f.StringVarP(&file, "file", "f", "", "template file (required)")
	f.StringVar(&stack, "stack", "", "stack name (required)")
	f.StringArrayVarP(&params, "parameter", "p", nil, "template parameter KEY=VALUE (repeatable)")
	cmd.RunE = r.action(func(cmd *cobra.Command, _ []string) error {
		if stack == "" {
			return usagef("--stack is required")
		}
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
		p, err := c.Preview(ctx, stack, api.DeployRequest{TemplateName: name, Template: text, Parameters: ps})
		if err != nil {
			return err
		}
		if r.output == "json" {
			return writeJSON(r.env.Stdout, p)
		}
		for _, d := range p.Diagnostics {
			fmt.Fprintln(r.env.Stderr, formatDiagnostic(d))
		}
		writePreview(r.env.Stdout, p)
		return nil
	})
	return cmd
}
