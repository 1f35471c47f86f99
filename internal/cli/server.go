package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/app"
)

func (r *runner) serverCommand() *cobra.Command {
	var cfg app.Config
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Serve the cairn API until interrupted",
		Long: "Serve the cairn API until interrupted. The global --token (or CAIRN_TOKEN) is the token\n" +
			"to require; without one, cairn reads or creates DIR/token.",
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Listen, "listen", "127.0.0.1:8080", "HTTP listen address")
	f.StringVar(&cfg.PublicURL, "public-url", "", "base URL handlers use to reach the HTTP listener (env CAIRN_PUBLIC_URL)")
	f.StringVar(&cfg.TLSListen, "tls-listen", "", "HTTPS listen address, such as :443 (env CAIRN_TLS_LISTEN); empty: no TLS")
	f.StringVar(&cfg.TLSCert, "tls-cert", "", "PEM certificate file; empty: a certificate from a CA cairn makes in DIR/tls")
	f.StringVar(&cfg.TLSKey, "tls-key", "", "PEM key file of --tls-cert")
	f.StringVar(&cfg.TLSPublicURL, "tls-public-url", "", "base URL handlers use to reach the HTTPS listener (env CAIRN_TLS_PUBLIC_URL)")
	f.BoolVar(&cfg.NoAuth, "no-auth", false, "serve without a token (loopback listeners only)")
	f.StringVar(&cfg.Region, "region", "", "region pseudo parameter")
	f.StringVar(&cfg.AccountID, "account-id", "", "account id pseudo parameter")
	cmd.RunE = r.action(func(cmd *cobra.Command, _ []string) error {
		for flag, p := range map[string]*string{"public-url": &cfg.PublicURL, "tls-listen": &cfg.TLSListen,
			"tls-public-url": &cfg.TLSPublicURL} {
			if !cmd.Flags().Changed(flag) && *p == "" {
				*p = r.env.Getenv(envName(flag))
			}
		}
		if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
			return usagef("--tls-cert and --tls-key go together")
		}
		cfg.Dir = r.dir
		cfg.Token = r.token
		cfg.Logger = slog.New(slog.NewJSONHandler(r.env.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
		ctx := cmd.Context()
		a, err := r.env.Start(ctx, cfg)
		if err != nil {
			return fmt.Errorf("cannot start cairn: %w", err)
		}
		fmt.Fprintf(r.env.Stdout, "cairn is serving on %s\n", a.URL())
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := a.Shutdown(sctx); err != nil {
			return fmt.Errorf("cannot stop cleanly: %w", err)
		}
		return nil
	})
	return cmd
}

// envName is the environment variable of a server flag: "public-url" -> CAIRN_PUBLIC_URL.
func envName(flag string) string {
	b := []byte("CAIRN_" + flag)
	for i, c := range b {
		switch {
		case c == '-':
			b[i] = '_'
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
