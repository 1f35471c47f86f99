package app

import (
	"context"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn/internal/tlsca"
)

// listeners are the sockets Start serves.
type listeners struct {
	http      net.Listener
	tls       net.Listener // nil without TLS
	tlsConfig *tls.Config
}

// listen opens the listeners and works out the URLs (and the certificate) that go with them.
func (a *App) listen(ctx context.Context, cfg Config) (listeners, error) {
	var lns listeners
	var ln net.Listener
	var err error
	if cfg.RememberListen {
		ln, err = a.rememberedListener(ctx, cfg.Dir, a.anyRunning)
	} else if ln, err = net.Listen("tcp", cfg.Listen); err != nil {
		err = fmt.Errorf("cannot listen on %s: %w", cfg.Listen, err)
	}
	if err != nil {
		return lns, err
	}
	a.listeners = append(a.listeners, ln)
	lns.http = ln
	a.url = "http://" + reachable(ln.Addr())
	a.publicURL = a.url
	if cfg.PublicURL != "" {
		if a.publicURL, err = baseURL(cfg.PublicURL, "--public-url"); err != nil {
			return lns, err
		}
	} else if isUnspecified(ln.Addr()) {
		a.log.Warn("listening on every interface without a public URL: handlers on other machines cannot reach the response URLs; set the public URL",
			"listen", cfg.Listen, "publicURL", a.publicURL)
	}
	if cfg.TLSListen == "" {
		return lns, nil
	}

	tln, err := net.Listen("tcp", cfg.TLSListen)
	if err != nil {
		return lns, fmt.Errorf("cannot listen on %s: %w", cfg.TLSListen, err)
	}
	a.listeners = append(a.listeners, tln)
	lns.tls = tln
	a.tlsURL = "https://localhost"
	if port := tln.Addr().(*net.TCPAddr).Port; port != 443 {
		a.tlsURL = fmt.Sprintf("https://localhost:%d", port)
	}
	if cfg.TLSPublicURL != "" {
		if a.tlsURL, err = baseURL(cfg.TLSPublicURL, "--tls-public-url"); err != nil {
			return lns, err
		}
	}
	lns.tlsConfig, err = a.certificate(cfg, tln)
	return lns, err
}

// anyRunning reports whether an operation is running on the state.
func (a *App) anyRunning(ctx context.Context) (bool, error) {
	ops, err := a.store.ListRunningOperations(ctx)
	if err != nil {
		return false, err
	}
	return len(ops) > 0, nil
}

// certificate loads cfg.TLSCert/TLSKey, or makes sure the self-made CA in Dir/tls has issued
// a certificate for every host handlers may use.
func (a *App) certificate(cfg Config, tln net.Listener) (*tls.Config, error) {
	if cfg.TLSCert != "" || cfg.TLSKey != "" {
		if cfg.TLSCert == "" || cfg.TLSKey == "" {
			return nil, errors.New("cannot use TLS: give both a certificate and its key, or neither")
		}
		pair, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("cannot load the TLS certificate: %w", err)
		}
		return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
	}
	var hosts []string
	for _, u := range []string{a.publicURL, a.tlsURL} {
		if pu, err := url.Parse(u); err == nil {
			hosts = append(hosts, pu.Hostname())
		}
	}
	if ta := tln.Addr().(*net.TCPAddr); !ta.IP.IsUnspecified() {
		hosts = append(hosts, ta.IP.String())
	}
	files, err := tlsca.Ensure(filepath.Join(cfg.Dir, "tls"), hosts)
	if err != nil {
		return nil, fmt.Errorf("cannot make the TLS certificate: %w", err)
	}
	a.caFile = files.CA
	if abs, err := filepath.Abs(files.CA); err == nil {
		a.caFile = abs
	}
	a.log.Info("HTTPS uses cairn's own CA; make handlers trust it",
		"NODE_EXTRA_CA_CERTS", a.caFile, "SSL_CERT_FILE", a.caFile, "hosts", strings.Join(files.Hosts, ","))
	return files.TLSConfig()
}

// reachable is addr as a client on this machine dials it: 127.0.0.1 when addr is unspecified
// (every interface).
func reachable(addr net.Addr) string {
	ta, ok := addr.(*net.TCPAddr)
	if !ok {
		return addr.String()
	}
	ip := ta.IP
	if ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1) // Go's "[::]" listeners are dual-stack
	}
	return net.JoinHostPort(ip.String(), fmt.Sprint(ta.Port))
}

func isUnspecified(addr net.Addr) bool {
	ta, ok := addr.(*net.TCPAddr)
	return ok && ta.IP.IsUnspecified()
}

// baseURL checks a configured base URL and drops a trailing slash.
func baseURL(raw, flag string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%s %q: want an absolute http(s) URL such as https://cairn.example.com", flag, raw)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// checkNoAuth refuses NoAuth unless every listener is loopback: the API can deploy anything.
func checkNoAuth(cfg Config) error {
	if !cfg.NoAuth {
		return nil
	}
	if len(cfg.Tenants) > 0 {
		return fmt.Errorf("cannot serve tenants without auth: --tenants and --no-auth exclude each other")
	}
	for _, addr := range []string{cfg.Listen, cfg.TLSListen, cfg.KubeListen} {
		if addr != "" && !isLoopback(addr) {
			return fmt.Errorf("cannot serve without auth on %s: --no-auth needs loopback listen addresses (127.0.0.1, ::1, localhost)", addr)
		}
	}
	return nil
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// resolveToken returns the bearer token: none with NoAuth, cfg.Token if set, else the one in
// Dir/token, created when absent.
func resolveToken(cfg Config) (string, error) {
	if cfg.NoAuth {
		return "", nil
	}
	if cfg.Token != "" {
		return cfg.Token, nil
	}
	path := filepath.Join(cfg.Dir, "token")
	for range 2 { // a second round reads a token a concurrent start just wrote
		b, err := os.ReadFile(path)
		if err == nil {
			tok := strings.TrimSpace(string(b))
			if tok == "" {
				return "", fmt.Errorf("cannot use token file %s: it is empty", path)
			}
			return tok, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("cannot read token: %w", err)
		}
		raw, err := random32()
		if err != nil {
			return "", fmt.Errorf("cannot generate token: %w", err)
		}
		tok := hex.EncodeToString(raw)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("cannot create token: %w", err)
		}
		_, werr := f.WriteString(tok + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return "", fmt.Errorf("cannot write token: %w", werr)
		}
		return tok, nil
	}
	return "", fmt.Errorf("cannot read token file %s", path)
}
