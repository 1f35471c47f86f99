package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/api"
)

func (r *runner) importCommand() *cobra.Command {
	var (
		sf    sourceFlags
		stack string
	)
	cmd := &cobra.Command{
		Use:   "import ADDRESS ID --stack NAME [-f DIR]",
		Short: "Adopt an existing object as a resource of a Terraform-language stack",
		Long: "Adopt an existing object as a resource of a Terraform-language stack, as terraform import does:\n" +
			"the provider reads the object by ID and the stack records it at ADDRESS, which must be declared\n" +
			"in the configuration. The next deploy plans against it.",
		Args: cobra.ExactArgs(2),
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&stack, "stack", "", "stack name (required)")
	var address, id string
	body := r.action(func(cmd *cobra.Command) error {
		if err := required("--stack", stack); err != nil {
			return err
		}
		src, err := r.readSource(&sf)
		if err != nil {
			return err
		}
		if src.dir == "" {
			return usagef("import needs a Terraform configuration directory (-f DIR)")
		}
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		res, err := c.Import(ctx, stack, api.ImportRequest{Source: src.req, Address: address, ID: id})
		if err != nil {
			return err
		}
		if r.view().json {
			return writeJSON(r.env.Stdout, res)
		}
		fmt.Fprintf(r.env.Stdout, "%s: Import prepared!\n  Prepared %s for import\n\nImport successful!\n\n"+
			"The resources that were imported are shown above. These resources are now in\nstack %s and will be managed by cairn.\n",
			res.LogicalID, res.Type, stack)
		return nil
	})
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		address, id = args[0], args[1]
		return body(cmd, nil)
	}
	return cmd
}
