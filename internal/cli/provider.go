package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/client"
)

// providerCommand is `cairn provider ...`: the private-provider registry (RFS's
// /v1/private-providers) of the caller's tenant. Other provider commands (serve) are added to
// it with AddCommand.
func (r *runner) providerCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "provider",
		Short: "Manage private providers: Terraform providers served by a function, used as huawei.com/private-provider/NAME",
	}
	version := &cobra.Command{Use: "version", Short: "Manage the versions of a private provider"}
	version.AddCommand(r.providerVersionCreateCommand(), r.providerVersionListCommand(),
		r.providerVersionShowCommand(), r.providerVersionDeleteCommand())
	cmd.AddCommand(r.providerCreateCommand(), r.providerListCommand(), r.providerShowCommand(),
		r.providerUpdateCommand(), r.providerDeleteCommand(), version, r.providerServeCommand())
	return cmd
}

// withClient is action for commands taking exactly len(names) arguments: it checks them,
// connects, and runs fn with the client and the arguments.
func (r *runner) withClient(names []string, fn func(ctx context.Context, c *client.Client, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != len(names) {
			return usagef("%s takes %d argument(s): %v", cmd.CommandPath(), len(names), names)
		}
		return r.action(func(cmd *cobra.Command) error {
			ctx := cmd.Context()
			c, stop, err := r.connect(ctx)
			if err != nil {
				return err
			}
			defer stop()
			return fn(ctx, c, args)
		})(cmd, nil)
	}
}

func (r *runner) providerCreateCommand() *cobra.Command {
	var req api.CreatePrivateProviderRequest
	cmd := &cobra.Command{
		Use:   "create NAME [--description D] [--version V --function-urn URN [--version-description D]]",
		Short: "Register a private provider, optionally with its first version",
	}
	f := cmd.Flags()
	f.StringVar(&req.ProviderDescription, "description", "", "description, up to 1024 characters")
	f.StringVar(&req.ProviderVersion, "version", "", "first version (semantic version such as 1.0.0); needs --function-urn")
	f.StringVar(&req.FunctionGraphURN, "function-urn", "", "function URN of the first version: urn:fss:REGION:PROJECT:function:default:NAME:VERSION")
	f.StringVar(&req.VersionDescription, "version-description", "", "description of the first version")
	f.StringVar(&req.ProviderAgencyURN, "agency-urn", "", "IAM agency URN the provider's functions run with (RFS compatibility)")
	cmd.RunE = r.withClient([]string{"NAME"}, func(ctx context.Context, c *client.Client, args []string) error {
		if (req.ProviderVersion == "") != (req.FunctionGraphURN == "") {
			return usagef("--version and --function-urn go together")
		}
		req.ProviderName = args[0]
		resp, err := c.CreatePrivateProvider(ctx, req)
		if err != nil {
			return err
		}
		if r.output == "json" {
			return writeJSON(r.env.Stdout, resp)
		}
		fmt.Fprintf(r.env.Stdout, "created private provider %s (id %s)\nsource: %s\n", req.ProviderName, resp.ProviderID, resp.ProviderSource)
		if req.ProviderVersion != "" {
			fmt.Fprintf(r.env.Stdout, "version: %s -> %s\n", req.ProviderVersion, req.FunctionGraphURN)
		}
		return nil
	})
	return cmd
}

func (r *runner) providerListCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: "List your private providers, newest first"}
	cmd.RunE = r.withClient(nil, func(ctx context.Context, c *client.Client, _ []string) error {
		ps, err := c.AllPrivateProviders(ctx)
		if err != nil {
			return err
		}
		if r.output == "json" {
			return writeJSON(r.env.Stdout, nonNil(ps))
		}
		if len(ps) == 0 {
			fmt.Fprintln(r.env.Stdout, "no private providers")
			return nil
		}
		tw := tabwriter.NewWriter(r.env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSOURCE\tUPDATED\tDESCRIPTION")
		for _, p := range ps {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.ProviderName, p.ProviderSource, p.UpdateTime, p.ProviderDescription)
		}
		return tw.Flush()
	})
	return cmd
}

func (r *runner) providerShowCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "show NAME", Short: "Show a private provider and its versions"}
	cmd.RunE = r.withClient([]string{"NAME"}, func(ctx context.Context, c *client.Client, args []string) error {
		p, err := c.PrivateProvider(ctx, args[0], "")
		if err != nil {
			return err
		}
		vs, err := c.AllPrivateProviderVersions(ctx, args[0])
		if err != nil {
			return err
		}
		if r.output == "json" {
			return writeJSON(r.env.Stdout, struct {
				api.PrivateProvider
				Versions []api.PrivateProviderVersion `json:"versions"`
			}{p, nonNil(vs)})
		}
		tw := tabwriter.NewWriter(r.env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "name:\t%s\nid:\t%s\nsource:\t%s\ndescription:\t%s\ncreated:\t%s\nupdated:\t%s\n",
			p.ProviderName, p.ProviderID, p.ProviderSource, p.ProviderDescription, p.CreateTime, p.UpdateTime)
		if p.ProviderAgencyURN != "" || p.ProviderAgencyName != "" {
			fmt.Fprintf(tw, "agency:\t%s%s\n", p.ProviderAgencyURN, p.ProviderAgencyName)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(r.env.Stdout)
		return r.versionTable(vs)
	})
	return cmd
}

func (r *runner) providerUpdateCommand() *cobra.Command {
	var desc string
	cmd := &cobra.Command{Use: "update NAME --description D", Short: "Change a private provider's description"}
	cmd.Flags().StringVar(&desc, "description", "", "the new description (\"\" clears it)")
	cmd.RunE = r.withClient([]string{"NAME"}, func(ctx context.Context, c *client.Client, args []string) error {
		if !cmd.Flags().Changed("description") {
			return usagef("give --description: it is the only thing update changes")
		}
		if err := c.UpdatePrivateProvider(ctx, args[0], api.UpdatePrivateProviderRequest{ProviderDescription: &desc}); err != nil {
			return err
		}
		return r.done("updated private provider %s\n", args[0])
	})
	return cmd
}

func (r *runner) providerDeleteCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "delete NAME", Short: "Delete a private provider and every version of it"}
	cmd.RunE = r.withClient([]string{"NAME"}, func(ctx context.Context, c *client.Client, args []string) error {
		if err := c.DeletePrivateProvider(ctx, args[0], ""); err != nil {
			return err
		}
		return r.done("deleted private provider %s and its versions\n", args[0])
	})
	return cmd
}

func (r *runner) providerVersionCreateCommand() *cobra.Command {
	var req api.CreatePrivateProviderVersionRequest
	cmd := &cobra.Command{
		Use:   "create NAME --version V --function-urn URN [--description D]",
		Short: "Add a version to a private provider (versions are immutable)",
	}
	f := cmd.Flags()
	f.StringVar(&req.ProviderVersion, "version", "", "semantic version such as 1.0.0 (required)")
	f.StringVar(&req.FunctionGraphURN, "function-urn", "", "function URN: urn:fss:REGION:PROJECT:function:default:NAME:VERSION (required)")
	f.StringVar(&req.VersionDescription, "description", "", "description of the version")
	cmd.RunE = r.withClient([]string{"NAME"}, func(ctx context.Context, c *client.Client, args []string) error {
		if req.ProviderVersion == "" || req.FunctionGraphURN == "" {
			return usagef("give --version and --function-urn")
		}
		if err := c.CreatePrivateProviderVersion(ctx, args[0], req); err != nil {
			return err
		}
		return r.done("created version %s of private provider %s -> %s\n", req.ProviderVersion, args[0], req.FunctionGraphURN)
	})
	return cmd
}

func (r *runner) providerVersionListCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "list NAME", Short: "List the versions of a private provider, newest first"}
	cmd.RunE = r.withClient([]string{"NAME"}, func(ctx context.Context, c *client.Client, args []string) error {
		vs, err := c.AllPrivateProviderVersions(ctx, args[0])
		if err != nil {
			return err
		}
		if r.output == "json" {
			return writeJSON(r.env.Stdout, nonNil(vs))
		}
		return r.versionTable(vs)
	})
	return cmd
}

func (r *runner) providerVersionShowCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "show NAME VERSION", Short: "Show one version of a private provider"}
	cmd.RunE = r.withClient([]string{"NAME", "VERSION"}, func(ctx context.Context, c *client.Client, args []string) error {
		v, err := c.PrivateProviderVersion(ctx, args[0], args[1], "")
		if err != nil {
			return err
		}
		if r.output == "json" {
			return writeJSON(r.env.Stdout, v)
		}
		tw := tabwriter.NewWriter(r.env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "provider:\t%s\nsource:\t%s\nversion:\t%s\nfunction:\t%s\ndescription:\t%s\ncreated:\t%s\n",
			v.ProviderName, v.ProviderSource, v.ProviderVersion, v.FunctionGraphURN, v.VersionDescription, v.CreateTime)
		return tw.Flush()
	})
	return cmd
}

func (r *runner) providerVersionDeleteCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "delete NAME VERSION", Short: "Delete one version of a private provider"}
	cmd.RunE = r.withClient([]string{"NAME", "VERSION"}, func(ctx context.Context, c *client.Client, args []string) error {
		if err := c.DeletePrivateProviderVersion(ctx, args[0], args[1], ""); err != nil {
			return err
		}
		return r.done("deleted version %s of private provider %s\n", args[1], args[0])
	})
	return cmd
}

func (r *runner) versionTable(vs []api.PrivateProviderVersion) error {
	if len(vs) == 0 {
		fmt.Fprintln(r.env.Stdout, "no versions")
		return nil
	}
	tw := tabwriter.NewWriter(r.env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tFUNCTION\tCREATED\tDESCRIPTION")
	for _, v := range vs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.ProviderVersion, v.FunctionGraphURN, v.CreateTime, v.VersionDescription)
	}
	return tw.Flush()
}

// done prints a confirmation in text mode, {"ok": true} in JSON mode.
func (r *runner) done(format string, args ...any) error {
	if r.output == "json" {
		return writeJSON(r.env.Stdout, map[string]bool{"ok": true})
	}
	fmt.Fprintf(r.env.Stdout, format, args...)
	return nil
}
