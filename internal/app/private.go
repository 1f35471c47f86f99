package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/egress"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/function"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/httpfunc"
	"github.com/cairn-dev/cairn/internal/provider/tfplugin"
	"github.com/cairn-dev/cairn/internal/registry"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/tenant"
)

// privateProviders resolves huawei.com/private-provider/NAME requirements as RFS does: the
// tenant's registry gives the exact version's function URN, the function its URL, and every
// tfplugin5 call goes there as POST /provider.
type privateProviders struct {
	reg   *registry.Service
	fns   *function.Manager
	local *localFunctions
	// urlClient calls url functions: only where the service-token policy allows (the
	// functions cairn serves itself on loopback are called without it).
	urlClient *http.Client
}

// urlFunctionClient is the client of private providers' url functions under policy.
func urlFunctionClient(policy *egress.Policy) *http.Client {
	return policy.Client(http.DefaultTransport.(*http.Transport), &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second})
}

// localFunctions are the terraform-provider functions cairn serves itself: one envelope
// server per provider binary, on a loopback port, started on first use.
type localFunctions struct {
	mu      sync.Mutex
	servers map[string]*localServer
	log     *slog.Logger
}

type localServer struct {
	fn  *httpfunc.Server
	srv *http.Server
	url string
}

func (l *localFunctions) url(exe string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.servers[exe]; ok {
		return s.url, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("cannot serve %s: %w", exe, err)
	}
	fn := httpfunc.NewServer(exe, 2, l.log)
	s := &localServer{fn: fn, srv: &http.Server{Handler: fn, ReadHeaderTimeout: 10 * time.Second}, url: "http://" + ln.Addr().String()}
	go func() { _ = s.srv.Serve(ln) }()
	if l.servers == nil {
		l.servers = map[string]*localServer{}
	}
	l.servers[exe] = s
	return s.url, nil
}

// close stops the servers and their provider processes.
func (l *localFunctions) close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.servers {
		_ = s.srv.Close()
		s.fn.Close()
	}
	l.servers = nil
}

// resolve answers the requirements that name private providers and returns the others.
func (pp privateProviders) resolve(ctx context.Context, reqs []*template.ProviderRequirement, log *slog.Logger) (map[string]engine.Plugin, []*template.ProviderRequirement, diag.Diagnostics) {
	out := map[string]engine.Plugin{}
	var rest []*template.ProviderRequirement
	var diags diag.Diagnostics
	for _, r := range reqs {
		name, ok := registry.ParseSource(r.Source)
		if !ok {
			rest = append(rest, r)
			continue
		}
		path := "terraform.required_providers." + r.Name
		if pp.reg == nil {
			diags = diags.Append(diag.Errorf(r.Range, path, "private provider %s: this cairn has no private-provider registry", r.Source))
			continue
		}
		res, err := pp.reg.Resolve(ctx, tenant.From(ctx), name, r.Versions)
		if err != nil {
			diags = diags.Append(diag.Errorf(r.Range, path, "%s", err))
			continue
		}
		fn, err := pp.fns.Resolve(ctx, res.FunctionURN)
		if err != nil {
			var unknown *function.UnknownError
			if errors.As(err, &unknown) || errors.Is(err, function.ErrNotFound) {
				err = fmt.Errorf("private provider %s %s points at function %s, which is not registered: %w", res.Source, res.Version, res.FunctionURN, err)
			}
			diags = diags.Append(diag.Errorf(r.Range, path, "%s", err))
			continue
		}
		if fn.Kind == function.KindTerraformProvider && pp.local != nil {
			exe, err := function.ProviderExecutable(fn.CodeDir)
			if err != nil {
				diags = diags.Append(diag.Errorf(r.Range, path, "private provider %s %s: function %s: %s", res.Source, res.Version, fn.Name, err))
				continue
			}
			url, err := pp.local.url(exe)
			if err != nil {
				diags = diags.Append(diag.Errorf(r.Range, path, "private provider %s %s: %s", res.Source, res.Version, err))
				continue
			}
			out[r.Source] = privatePlugin{version: res.Version, url: url, timeout: fn.Timeout, log: log}
			continue
		}
		if fn.Kind != function.KindURL {
			diags = diags.Append(diag.Errorf(r.Range, path,
				"private provider %s %s: function %s is a %s function; a private provider needs an HTTP function (cairn function create NAME --url URL, e.g. of `cairn provider serve`)",
				res.Source, res.Version, fn.Name, fn.Kind))
			continue
		}
		out[r.Source] = privatePlugin{version: res.Version, url: fn.URL, timeout: fn.Timeout, log: log, client: pp.urlClient}
	}
	return out, rest, diags
}

// privatePlugin is a private provider version: its HTTP function.
type privatePlugin struct {
	version, url string
	timeout      time.Duration
	log          *slog.Logger
	client       *http.Client // nil: http.DefaultClient (a function cairn serves itself)
}

func (p privatePlugin) Version() string { return p.version }

// Open returns a provider whose calls travel through the function; each instance is one
// RFS session (one session id, the configuration sent with every call).
func (p privatePlugin) Open(name, _ string) provider.Provider {
	conn := httpfunc.NewConn(p.url, httpfunc.Options{Timeout: p.timeout, Client: p.client})
	return tfplugin.NewV5(conn, tfplugin.Options{Name: name, Logger: p.log})
}
