package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/client"
)

func (r *runner) tokenCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Create, list and revoke API tokens, and grant roles on stacks (an admin's)",
		Long: "API tokens stand for a tenant with a role: a viewer reads (never secrets), a deployer also\n" +
			"deploys, deletes, cancels and manages functions and private providers, an admin also manages\n" +
			"its tenant's tokens and grants and reads its audit log. The server's own token is the admin of\n" +
			"tenant default, which acts for every tenant. cairn stores only a hash of each token.",
		Example: "  cairn token create --tenant payments --role deployer --name ci\n" +
			"  cairn token create --tenant payments --role viewer --grant 'web-*=deployer'\n" +
			"  cairn token revoke tok_3f2a9c0d11e4",
	}
	cmd.AddCommand(r.tokenCreateCommand(), r.tokenListCommand(), r.tokenRevokeCommand(),
		r.tokenGrantCommand(), r.tokenUngrantCommand(), r.tokenGrantsCommand())
	return cmd
}

func (r *runner) tokenCreateCommand() *cobra.Command {
	var req api.TokenCreateRequest
	var grants []string
	var expires time.Duration
	cmd := &cobra.Command{Use: "create --role viewer|deployer|admin [--tenant T]", Short: "Create a token; it is printed once",
		Example: "  cairn token create --tenant payments --role deployer --name ci --expires-in 2160h > ci.token"}
	f := cmd.Flags()
	f.StringVar(&req.Tenant, "tenant", "", "the token's tenant (default: yours; another only for the server's admin)")
	f.StringVar(&req.Role, "role", "", "viewer, deployer or admin (required)")
	f.StringVar(&req.Name, "name", "", "what the token is for")
	f.DurationVar(&expires, "expires-in", 0, "the token expires after this long (default: never)")
	f.StringSliceVar(&grants, "grant", nil, "STACK=ROLE: a stronger role on the stacks matching STACK (a glob such as web-*); repeatable")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		if err := required("--role", req.Role); err != nil {
			return err
		}
		for _, g := range grants {
			stack, role, ok := strings.Cut(g, "=")
			if !ok || stack == "" || role == "" {
				return usagef("--grant takes STACK=ROLE, not %q", g)
			}
			req.Grants = append(req.Grants, api.Grant{Stack: stack, Role: role})
		}
		if expires < 0 {
			return usagef("--expires-in must be positive")
		}
		if expires > 0 {
			req.ExpiresIn = expires.String()
		}
		return r.withConn(cmd, func(ctx context.Context, c *client.Client) error {
			tok, err := c.CreateToken(ctx, req)
			if err != nil {
				return err
			}
			if r.output == "json" {
				return writeJSON(r.env.Stdout, tok)
			}
			fmt.Fprintf(r.env.Stderr, "Created %s: tenant %s, role %s. The token is shown this once:\n", tok.ID, tok.Tenant, tok.Role)
			fmt.Fprintln(r.env.Stdout, tok.Secret)
			return nil
		})
	})
	return cmd
}

func (r *runner) tokenListCommand() *cobra.Command {
	var tenantName string
	cmd := &cobra.Command{Use: "list [--tenant T]", Short: "List tokens (never their secrets)",
		Example: "  cairn token list --tenant payments"}
	cmd.Flags().StringVar(&tenantName, "tenant", "", "the tenant (default: yours; the server's admin sees every tenant's)")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		return r.withConn(cmd, func(ctx context.Context, c *client.Client) error {
			toks, err := c.Tokens(ctx, tenantName)
			if err != nil {
				return err
			}
			if r.output == "json" {
				return writeJSON(r.env.Stdout, nonNil(toks))
			}
			tw := tabwriter.NewWriter(r.env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTENANT\tROLE\tNAME\tCREATED\tEXPIRES\tSTATUS")
			for _, t := range toks {
				status, exp := "active", "never"
				if !t.ExpiresAt.IsZero() {
					exp = t.ExpiresAt.Format(time.RFC3339)
					if time.Now().After(t.ExpiresAt) {
						status = "expired"
					}
				}
				if !t.RevokedAt.IsZero() {
					status = "revoked " + t.RevokedAt.Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Tenant, t.Role, t.Name, t.CreatedAt.Format(time.RFC3339), exp, status)
			}
			return tw.Flush()
		})
	})
	return cmd
}

func (r *runner) tokenRevokeCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "revoke ID", Short: "Revoke a token: it is refused from now on",
		Example: "  cairn token revoke tok_3f2a9c0d11e4"}
	cmd.RunE = r.withClient([]string{"ID"}, func(ctx context.Context, c *client.Client, args []string) error {
		if err := c.RevokeToken(ctx, args[0]); err != nil {
			return err
		}
		fmt.Fprintf(r.env.Stdout, "revoked %s\n", args[0])
		return nil
	})
	return cmd
}

func (r *runner) tokenGrantCommand() *cobra.Command {
	var g api.Grant
	cmd := &cobra.Command{Use: "grant --subject ID --stack PATTERN --role ROLE", Short: "Give a token (or oidc:SUBJECT) a stronger role on some stacks",
		Example: "  cairn token grant --subject tok_3f2a9c0d11e4 --stack 'web-*' --role deployer\n" +
			"  cairn token grant --subject oidc:ann@example.com --stack db --role admin"}
	f := cmd.Flags()
	f.StringVar(&g.Subject, "subject", "", "a token's ID, or oidc: and an OIDC subject (required)")
	f.StringVar(&g.Stack, "stack", "", "a stack name or glob such as web-* (required)")
	f.StringVar(&g.Role, "role", "", "viewer, deployer or admin (required)")
	f.StringVar(&g.Tenant, "tenant", "", "the tenant (default: yours)")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		for flag, v := range map[string]string{"--subject": g.Subject, "--stack": g.Stack, "--role": g.Role} {
			if err := required(flag, v); err != nil {
				return err
			}
		}
		return r.withConn(cmd, func(ctx context.Context, c *client.Client) error {
			if err := c.PutGrant(ctx, g); err != nil {
				return err
			}
			fmt.Fprintf(r.env.Stdout, "%s is %s on stacks %s\n", g.Subject, g.Role, g.Stack)
			return nil
		})
	})
	return cmd
}

func (r *runner) tokenUngrantCommand() *cobra.Command {
	var tenantName, subject, stack string
	cmd := &cobra.Command{Use: "ungrant --subject ID --stack PATTERN", Short: "Remove a grant",
		Example: "  cairn token ungrant --subject tok_3f2a9c0d11e4 --stack 'web-*'"}
	f := cmd.Flags()
	f.StringVar(&subject, "subject", "", "a token's ID, or oidc:SUBJECT (required)")
	f.StringVar(&stack, "stack", "", "the grant's stack pattern (required)")
	f.StringVar(&tenantName, "tenant", "", "the tenant (default: yours)")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		if err := required("--subject", subject); err != nil {
			return err
		}
		if err := required("--stack", stack); err != nil {
			return err
		}
		return r.withConn(cmd, func(ctx context.Context, c *client.Client) error {
			return c.DeleteGrant(ctx, tenantName, subject, stack)
		})
	})
	return cmd
}

func (r *runner) tokenGrantsCommand() *cobra.Command {
	var tenantName, subject string
	cmd := &cobra.Command{Use: "grants [--subject ID]", Short: "List grants", Example: "  cairn token grants --subject tok_3f2a9c0d11e4"}
	cmd.Flags().StringVar(&subject, "subject", "", "only this subject's")
	cmd.Flags().StringVar(&tenantName, "tenant", "", "the tenant (default: yours)")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		return r.withConn(cmd, func(ctx context.Context, c *client.Client) error {
			gs, err := c.Grants(ctx, tenantName, subject)
			if err != nil {
				return err
			}
			if r.output == "json" {
				return writeJSON(r.env.Stdout, nonNil(gs))
			}
			tw := tabwriter.NewWriter(r.env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SUBJECT\tSTACKS\tROLE")
			for _, g := range gs {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", g.Subject, g.Stack, g.Role)
			}
			return tw.Flush()
		})
	})
	return cmd
}

func (r *runner) auditCommand() *cobra.Command {
	var (
		tenantName string
		after      int64
		limit      int
	)
	cmd := &cobra.Command{
		Use:   "audit [--tenant T] [--after SEQ] [--limit N]",
		Short: "Read the audit log: every change made through the API, and every refusal (an admin's)",
		Long: "Print the audit log, oldest first: when, the caller's tenant, subject (a token's ID, \"server\"\n" +
			"for the server's own token, oidc:SUBJECT) and role, the action (method and route), what it\n" +
			"acted on, the client's address and the HTTP status. A tenant's admin reads its tenant's; the\n" +
			"server's admin reads every tenant's, or one with --tenant.",
		Example: "  cairn audit --tenant payments --limit 100\n  cairn audit --after 5120 --output json",
	}
	f := cmd.Flags()
	f.StringVar(&tenantName, "tenant", "", "only this tenant's entries")
	f.Int64Var(&after, "after", 0, "only entries after this sequence number")
	f.IntVar(&limit, "limit", 0, "at most this many entries (at most 1000)")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		return r.withConn(cmd, func(ctx context.Context, c *client.Client) error {
			es, err := c.Audit(ctx, tenantName, after, limit)
			if err != nil {
				return err
			}
			if r.output == "json" {
				return writeJSON(r.env.Stdout, nonNil(es))
			}
			tw := tabwriter.NewWriter(r.env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SEQ\tTIME\tTENANT\tSUBJECT\tROLE\tACTION\tTARGET\tFROM\tSTATUS")
			for _, e := range es {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", e.Seq, e.At.Format(time.RFC3339), e.Tenant, e.Subject,
					e.Role, e.Action, e.Target, e.Remote, e.Status)
			}
			return tw.Flush()
		})
	})
	return cmd
}

// withConn connects to cairn, runs fn and closes the connection.
func (r *runner) withConn(cmd *cobra.Command, fn func(ctx context.Context, c *client.Client) error) error {
	ctx := cmd.Context()
	c, closeApp, err := r.connect(ctx)
	if err != nil {
		return err
	}
	defer closeApp()
	return fn(ctx, c)
}
