package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/client"

	"github.com/cairn-dev/cairn/api"
)

// stateCommand moves a stack's state in and out as its tool's state files: terraform states
// for Terraform-language stacks, Pulumi deployments for Pulumi YAML stacks.
func (r *runner) stateCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "state",
		Short: "Move a stack's state to and from terraform state files or Pulumi deployments",
	}
	cmd.AddCommand(r.statePullCommand(), r.statePushCommand())
	return cmd
}

func (r *runner) statePullCommand() *cobra.Command {
	var (
		stack, out  string
		showSecrets bool
	)
	cmd := &cobra.Command{
		Use:   "pull --stack NAME [--out FILE]",
		Short: "Write a stack as a terraform state file or a Pulumi deployment",
		Long: "Write a Terraform-language stack as a terraform state file (format version 4), to stdout or\n" +
			"--out FILE. With the same configuration and providers, terraform plan on it has no changes:\n" +
			"this is how a stack moves from cairn to terraform.\n\n" +
			"Write a Pulumi YAML stack as a Pulumi deployment (version 3, as pulumi stack export writes it),\n" +
			"which pulumi stack import adopts. Its secrets are sealed as Pulumi's passphrase secrets provider\n" +
			"seals them, with PULUMI_CONFIG_PASSPHRASE (or the file PULUMI_CONFIG_PASSPHRASE_FILE names),\n" +
			"or written in clear with --show-secrets.",
	}
	cmd.Flags().StringVar(&stack, "stack", "", "stack name (required)")
	cmd.Flags().StringVar(&out, "out", "", "file to write (default: stdout)")
	cmd.Flags().BoolVar(&showSecrets, "show-secrets", false, "write a Pulumi deployment's secrets in clear")
	cmd.RunE = r.stackAction(&stack, func(ctx context.Context, c *client.Client) error {
		pass, err := r.pulumiPassphrase()
		if err != nil {
			return err
		}
		b, err := c.PullState(ctx, stack, api.StatePullOptions{Passphrase: pass, ShowSecrets: showSecrets})
		if err != nil {
			return err
		}
		if out == "" {
			_, err = r.env.Stdout.Write(b)
			return err
		}
		if err := os.WriteFile(out, b, 0o600); err != nil { // state holds secrets, as terraform.tfstate does
			return fmt.Errorf("cannot write %s: %w", out, err)
		}
		return nil
	})
	return cmd
}

func (r *runner) statePushCommand() *cobra.Command {
	var (
		sf    sourceFlags
		stack string
	)
	cmd := &cobra.Command{
		Use:   "push FILE --stack NAME [-f DIR]",
		Short: "Adopt a terraform state file or a Pulumi deployment as a stack's resources",
		Long: "Adopt a terraform state file (format version 4, as terraform apply or terraform state pull\n" +
			"write it; - for stdin) as the resources of a Terraform-language stack, replacing the ones it had.\n" +
			"The configuration (-f DIR, default the current directory) maps the state's providers: a\n" +
			"state whose providers or resource types it cannot serve is refused, and nothing changes.\n" +
			"Then cairn preview on the same configuration shows no changes, and cairn deploy creates,\n" +
			"updates or replaces nothing: this is how a stack moves from terraform to cairn.\n\n" +
			"With a Pulumi YAML program (-f DIR holding Pulumi.yaml), adopt a Pulumi deployment (as pulumi\n" +
			"stack export writes it): every resource must be declared by the program with the same type;\n" +
			"passphrase-sealed secrets are opened with PULUMI_CONFIG_PASSPHRASE(_FILE).",
		Args: cobra.ExactArgs(1),
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&stack, "stack", "", "stack name (required)")
	var file string
	body := r.action(func(cmd *cobra.Command) error {
		if err := required("--stack", stack); err != nil {
			return err
		}
		var b []byte
		var err error
		if file == "-" {
			b, err = io.ReadAll(r.env.Stdin)
		} else {
			b, err = os.ReadFile(file)
		}
		if err != nil {
			return fmt.Errorf("cannot read the state file: %w", err)
		}
		if !json.Valid(b) {
			return fmt.Errorf("%s is not a state file: not JSON", file)
		}
		src, err := r.readSource(&sf)
		if err != nil {
			return err
		}
		if src.dir == "" {
			return usagef("state push needs the configuration directory of the state (-f DIR)")
		}
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		pass, err := r.pulumiPassphrase()
		if err != nil {
			return err
		}
		resp, err := c.PushState(ctx, stack, api.StatePushRequest{Source: src.req, State: b, Passphrase: pass})
		if err != nil {
			return err
		}
		if r.view().json {
			return writeJSON(r.env.Stdout, resp)
		}
		if resp.Lineage == "" {
			fmt.Fprintf(r.env.Stdout, "Stack %s now holds the %d resource(s) of the state.\n", stack, resp.Resources)
			return nil
		}
		fmt.Fprintf(r.env.Stdout, "Stack %s now holds the %d resource instance(s) of the terraform state (lineage %s, serial %d).\n",
			stack, resp.Resources, resp.Lineage, resp.Serial)
		return nil
	})
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		file = args[0]
		return body(cmd, nil)
	}
	return cmd
}

// pulumiPassphrase is the passphrase of Pulumi's passphrase secrets provider, as pulumi reads
// it: PULUMI_CONFIG_PASSPHRASE, else the file PULUMI_CONFIG_PASSPHRASE_FILE names ("" for none).
func (r *runner) pulumiPassphrase() (string, error) {
	if p := r.env.Getenv("PULUMI_CONFIG_PASSPHRASE"); p != "" {
		return p, nil
	}
	f := r.env.Getenv("PULUMI_CONFIG_PASSPHRASE_FILE")
	if f == "" {
		return "", nil
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return "", fmt.Errorf("cannot read PULUMI_CONFIG_PASSPHRASE_FILE: %w", err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}
