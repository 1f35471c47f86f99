package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/client"
)

// retry is how the client retries idempotent requests; tests shorten it.
var retry = client.DefaultRetry

// connect returns a client of --server, or of a cairn started in-process; stop stops the
// latter (with a 10 s deadline) and must be called. Both go through the same HTTP API.
func (r *runner) connect(ctx context.Context) (c *client.Client, stop func(), err error) {
	if r.server != "" {
		if err := checkServerURL(r.server); err != nil {
			return nil, nil, err
		}
		hc, err := httpClient(r.caFile)
		if err != nil {
			return nil, nil, err
		}
		return client.New(r.server, r.token, hc, client.WithRetry(retry)), func() {}, nil
	}
	if r.env.Start == nil {
		return nil, nil, fmt.Errorf("no server given (--server or CAIRN_SERVER) and this build cannot run cairn in-process")
	}
	cfg, err := r.inProcessConfig()
	if err != nil {
		return nil, nil, err
	}
	if cfg.Limits, err = envLimits(r.env.Getenv); err != nil {
		return nil, nil, err
	}
	a, err := r.env.Start(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot start cairn in-process: %w", err)
	}
	r.inProcess, r.app = true, a
	if ca := a.CAFile(); ca != "" && r.output != "json" {
		// Handlers that PUT over HTTPS must trust cairn's own CA; say how, once per run.
		fmt.Fprintf(r.env.Stderr, "cairn: HTTPS uses cairn's own CA: give handlers NODE_EXTRA_CA_CERTS=%s or SSL_CERT_FILE=%s\n", ca, ca)
	}
	// A transport of its own: the next in-process cairn on this directory listens on the same
	// remembered address, where a shared transport's idle connections lead to the one stopped.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	stop = func() {
		tr.CloseIdleConnections()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := a.Shutdown(sctx); err != nil {
			fmt.Fprintf(r.env.Stderr, "warning: cannot stop cairn cleanly: %s\n", err)
		}
	}
	return client.New(a.URL(), a.Token(), &http.Client{Transport: tr}, client.WithRetry(retry)), stop, nil
}

// checkServerURL refuses a --server that is not an http or https URL with a host
// ("localhost:8443" parses as the scheme "localhost").
func checkServerURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--server must be a URL such as https://host:8443, not %q", s)
	}
	return nil
}

// httpClient is the HTTP client of --server: the default one, or with caFile, one that
// trusts the CAs of that PEM bundle as well as the system's.
func httpClient(caFile string) (*http.Client, error) {
	if caFile == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("cannot read --ca-file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("cannot use --ca-file %s: it holds no PEM certificate", caFile)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: tr}, nil
}

// explain rewrites the errors a user meets first (a server that is down or not trusted, a
// stack that does not exist) into messages that say what to do; others pass unchanged.
func (r *runner) explain(err error) error {
	var ue *client.UnreachableError
	if errors.As(err, &ue) && !errors.Is(err, context.Canceled) {
		return errors.New(unreachable(ue, r.inProcess))
	}
	var ae *api.Error
	if errors.As(err, &ae) && ae.Code == api.CodeNotFound {
		if name, ok := missingStack(ae.Message); ok {
			return fmt.Errorf("stack %q does not exist (`cairn stacks` lists the stacks)", name)
		}
	}
	return err
}

// unreachable says why a request got no answer and what to try.
func unreachable(ue *client.UnreachableError, inProcess bool) string {
	prefix := "cannot reach the cairn server at " + ue.URL
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(ue.Err, &unknown):
		return fmt.Sprintf("%s: its TLS certificate is signed by an authority this machine does not trust — "+
			"give the CA's PEM bundle with --ca-file FILE (or CAIRN_CA_FILE)", prefix)
	case errors.As(ue.Err, &host):
		return fmt.Sprintf("%s: its TLS certificate is not valid for that name (%s) — use a name the certificate lists", prefix, host.Error())
	case errors.As(ue.Err, &invalid):
		return fmt.Sprintf("%s: its TLS certificate is not valid: %s", prefix, invalid.Error())
	case inProcess:
		return fmt.Sprintf("%s (cairn in-process): %v", prefix, ue.Err)
	}
	tries := ""
	if ue.Attempts > 1 {
		tries = fmt.Sprintf(" (tried %d times)", ue.Attempts)
	}
	cause := ue.Err.Error()
	switch {
	case errors.Is(ue.Err, syscall.ECONNREFUSED):
		cause = "connection refused"
	case errors.Is(ue.Err, syscall.ECONNRESET):
		cause = "connection reset"
	}
	return fmt.Sprintf("%s: %s%s — is `cairn server` running? set --server or CAIRN_SERVER", prefix, cause, tries)
}

// missingStack recognises the server's answer for a stack that does not exist ("cannot find
// stack NAME: not found") and returns NAME.
func missingStack(msg string) (string, bool) {
	rest, ok := strings.CutPrefix(msg, "cannot find stack ")
	if !ok {
		return "", false
	}
	name, _, _ := strings.Cut(rest, ": ")
	return name, name != ""
}
