package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/provider/httpfunc"
)

// providerServeCommand is `cairn provider serve`: any Terraform provider binary as an RFS
// HTTP function (POST /provider), so it can be registered as a private provider version.
func (r *runner) providerServeCommand() *cobra.Command {
	var (
		path, listen string
		warm         int
		reuse        bool
	)
	cmd := &cobra.Command{
		Use:   "serve --provider PATH [--listen :8000]",
		Short: "Serve a Terraform provider binary as an HTTP function (the RFS private-provider protocol)",
		Long: "Serve a Terraform provider binary (tfplugin5) as an HTTP function: every POST /provider\n" +
			"{method_name, request_data, context} runs on a fresh provider process, configured from\n" +
			"context.config_data first, and is answered {response_data, error} — the contract Huawei\n" +
			"RFS uses for private providers. Register the function's URL as a private provider version.",
	}
	f := cmd.Flags()
	f.StringVar(&path, "provider", "", "the provider binary (required)")
	f.StringVar(&listen, "listen", ":8000", "address to listen on (FunctionGraph HTTP functions listen on 8000)")
	f.IntVar(&warm, "warm", 2, "provider processes started ahead of requests")
	f.BoolVar(&reuse, "reuse", false, "keep one configured process per session instead of one per request (faster; RFS recommends one per request)")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		if err := required("--provider", path); err != nil {
			return err
		}
		if info, err := os.Stat(path); err != nil || info.IsDir() {
			return fmt.Errorf("--provider %s: not a provider binary: %v", path, err)
		}
		ln, err := net.Listen("tcp", listen)
		if err != nil {
			return err
		}
		srv := httpfunc.NewServer(path, warm, nil)
		srv.Reuse = reuse
		defer srv.Close()
		hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
		fmt.Fprintf(r.env.Stdout, "serving %s at http://%s%s\n", path, ln.Addr(), httpfunc.Path)
		ctx := cmd.Context()
		go func() {
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = hs.Shutdown(sctx)
		}()
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	return cmd
}
