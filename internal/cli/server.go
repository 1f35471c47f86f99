package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/app"
	"github.com/cairn-dev/cairn/internal/auth"
	"github.com/cairn-dev/cairn/internal/tenant"
)

// shutdownTimeout bounds the graceful stop of `cairn server`.
const shutdownTimeout = 30 * time.Second

func (r *runner) serverCommand() *cobra.Command {
	var (
		cfg     app.Config
		tenants string
	)
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Serve the cairn API until interrupted",
		Long: "Serve the cairn API until interrupted, then stop gracefully (30 s at most). Logs JSON to\n" +
			"stderr. Each flag not given falls back to its environment variable (--public-url:\n" +
			"CAIRN_PUBLIC_URL, ...). The global --token (or CAIRN_TOKEN) is the token to require;\n" +
			"without one, cairn reads or creates DIR/token.",
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Listen, "listen", "127.0.0.1:8080", "HTTP listen address (env CAIRN_LISTEN)")
	f.StringVar(&cfg.PublicURL, "public-url", "", "base URL handlers use to reach the HTTP listener (env CAIRN_PUBLIC_URL)")
	f.StringVar(&cfg.TLSListen, "tls-listen", "", "HTTPS listen address, such as :443 (env CAIRN_TLS_LISTEN); empty: no TLS")
	f.StringVar(&cfg.TLSCert, "tls-cert", "", "PEM certificate file (env CAIRN_TLS_CERT); empty: a certificate from a CA cairn makes in DIR/tls")
	f.StringVar(&cfg.TLSKey, "tls-key", "", "PEM key file of --tls-cert (env CAIRN_TLS_KEY)")
	f.StringVar(&cfg.TLSPublicURL, "tls-public-url", "", "base URL handlers use to reach the HTTPS listener (env CAIRN_TLS_PUBLIC_URL)")
	f.BoolVar(&cfg.NoAuth, "no-auth", false, "serve without a token (loopback listeners only)")
	f.StringVar(&tenants, "tenants", "", "file of \"TENANT TOKEN\" lines giving more tokens, each standing for a tenant that owns what it creates (env CAIRN_TENANTS); the --token is tenant \"default\"")
	f.BoolVar(&cfg.AllowTenantCode, "allow-tenant-code", false, "with --tenants, let every tenant run code on this server (functions with runtimes provided, nodejs, terraform-provider; local-exec provisioners); default: only tenant \"default\"")
	f.StringSliceVar(&cfg.ServiceTokenAllow, "service-token-allow", nil, "hosts and CIDRs that ServiceTokens and url functions may reach, comma-separated and repeatable, such as 10.0.0.0/8,handlers.internal (env CAIRN_SERVICE_TOKEN_ALLOW); default every host, but with --tenants no loopback, link-local or cloud-metadata address")
	f.StringVar(&cfg.SecretsKeyFile, "secrets-key-file", "", "file of the keys that encrypt secrets in the state (env CAIRN_SECRETS_KEY_FILE; default DIR.secrets.key beside DIR, created 0600); or give the key itself in env CAIRN_SECRETS_KEY, base64 of 32 bytes")
	f.BoolVar(&cfg.AcceptIAMNoop, "accept-iam-noop", false, "accept AWS::IAM::Role/Policy/ManagedPolicy and ALIYUN::RAM::Role in templates as recorded no-ops: nothing is applied, functions run as cairn's user (env CAIRN_ACCEPT_IAM_NOOP=true; in-process commands read the variable)")
	f.StringVar(&cfg.Region, "region", "", "region pseudo parameter (env CAIRN_REGION)")
	f.StringVar(&cfg.AccountID, "account-id", "", "account id pseudo parameter (env CAIRN_ACCOUNT_ID)")
	f.DurationVar(&cfg.ResponseNotice, "response-notice", time.Minute, "after this long without an answer to a custom-resource request, an event on the resource says what cairn waits for and where (env CAIRN_RESPONSE_NOTICE)")
	f.StringVar(&cfg.KubeListen, "kube-listen", "", "serve cairn's Kubernetes API (CRDs and their objects, for kubectl and controllers) on this HTTPS address, such as 127.0.0.1:6443 (env CAIRN_KUBE_LISTEN); needs the cairn-kube binary beside cairn or on PATH")
	f.StringVar(&cfg.KubeBinary, "kube-binary", "", "path of the cairn-kube binary (env CAIRN_KUBE_BINARY)")
	f.StringSliceVar(&cfg.KubeHosts, "kube-host", nil, "extra host names or addresses for the kube API's certificate, comma-separated and repeatable")
	f.StringVar(&cfg.Database, "database", "", "keep the state in this PostgreSQL database, shared by every replica, such as postgres://cairn@db.internal/cairn?sslmode=verify-full (env CAIRN_DATABASE); default SQLite in DIR/state.db")
	var oidc auth.OIDCConfig
	f.StringVar(&oidc.Issuer, "oidc-issuer", "", "accept ID tokens of this OIDC issuer as bearer tokens, such as https://accounts.example.com (env CAIRN_OIDC_ISSUER)")
	f.StringVar(&oidc.Audience, "oidc-audience", "", "the client ID the issuer's tokens must be issued to (env CAIRN_OIDC_AUDIENCE)")
	f.StringVar(&oidc.TenantClaim, "oidc-tenant-claim", "cairn_tenant", "the ID token claim naming the caller's tenant (env CAIRN_OIDC_TENANT_CLAIM)")
	f.StringVar(&oidc.RoleClaim, "oidc-role-claim", "cairn_role", "the ID token claim naming the caller's role; a token without it is a viewer (env CAIRN_OIDC_ROLE_CLAIM)")
	f.BoolVar(&oidc.AllowServerAdmin, "oidc-allow-server-admin", false, "let an ID token of tenant default with role admin be the server's admin (refused otherwise)")
	limits := addLimitFlags(cmd)
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		for flag, p := range configFlags(&cfg) {
			if v := r.env.Getenv(envName(flag)); v != "" && !cmd.Flags().Changed(flag) {
				*p = v
			}
		}
		if !cmd.Flags().Changed("response-notice") {
			d, err := responseNotice(r.env.Getenv)
			if err != nil {
				return err
			}
			if d > 0 {
				cfg.ResponseNotice = d
			}
		} else if cfg.ResponseNotice <= 0 {
			return usagef("--response-notice must be a positive duration")
		}
		for flag, p := range map[string]*string{"oidc-issuer": &oidc.Issuer, "oidc-audience": &oidc.Audience,
			"oidc-tenant-claim": &oidc.TenantClaim, "oidc-role-claim": &oidc.RoleClaim} {
			if v := r.env.Getenv(envName(flag)); v != "" && !cmd.Flags().Changed(flag) {
				*p = v
			}
		}
		if oidc.Issuer != "" || oidc.Audience != "" {
			if oidc.Issuer == "" || oidc.Audience == "" {
				return usagef("--oidc-issuer and --oidc-audience go together")
			}
			cfg.OIDC = &oidc
		}
		if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
			return usagef("--tls-cert and --tls-key go together")
		}
		var err error
		if cfg.Limits, err = limits.limits(cmd, r.env.Getenv); err != nil {
			return err
		}
		if v := r.env.Getenv(envName("service-token-allow")); v != "" && !cmd.Flags().Changed("service-token-allow") {
			cfg.ServiceTokenAllow = []string{v} // comma-separated, as the flag
		}
		if !cmd.Flags().Changed("accept-iam-noop") {
			cfg.AcceptIAMNoop = envTrue(r.env.Getenv(envName("accept-iam-noop")))
		}
		if v := r.env.Getenv("CAIRN_TENANTS"); v != "" && !cmd.Flags().Changed("tenants") {
			tenants = v
		}
		if tenants != "" {
			var err error
			if cfg.Tenants, err = tenant.ParseFile(tenants); err != nil {
				return err
			}
		}
		cfg.Dir = r.dir
		cfg.PluginDirs = r.pluginDirs
		cfg.SecretsKey = r.env.Getenv("CAIRN_SECRETS_KEY")
		cfg.Token = r.token
		cfg.Logger = slog.New(slog.NewJSONHandler(r.env.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
		if r.env.Start == nil {
			return fmt.Errorf("this build cannot run cairn")
		}
		ctx := cmd.Context()
		a, err := r.env.Start(ctx, cfg)
		if err != nil {
			return fmt.Errorf("cannot start cairn: %w", err)
		}
		fmt.Fprintf(r.env.Stdout, "cairn is serving on %s\n", a.URL())
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		if err := a.Shutdown(sctx); err != nil {
			return fmt.Errorf("cannot stop cleanly: %w", err)
		}
		return nil
	})
	return cmd
}
