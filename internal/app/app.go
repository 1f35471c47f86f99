// Package app assembles a running cairn: the state store in a directory, the response-URL
// signing key, the custom-resource provider, the engine (resuming what a previous run left
// running), and the HTTP API on a plain listener and, optionally, a TLS one. `cairn server`
// runs it, and every other CLI command runs it in-process on a loopback port.
//
// It is the one package besides cmd/cairn that chooses implementations (sqlite, customresource);
// it imports engine, server, tlsca, state, provider and their implementations, never cli.
package app

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/auth"
	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/egress"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/function"
	"github.com/cairn-dev/cairn/internal/kubeproc"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/customresource"
	"github.com/cairn-dev/cairn/internal/provider/kubeobject"
	"github.com/cairn-dev/cairn/internal/provider/lambda"
	"github.com/cairn-dev/cairn/internal/registry"
	"github.com/cairn-dev/cairn/internal/server"
)

// Config configures Start. Zero values are documented per field.
type Config struct {
	// Dir holds the state database, the token and the self-made CA; default ".cairn".
	Dir string
	// Listen is the HTTP listen address; default "127.0.0.1:8080". "127.0.0.1:0" picks a port.
	Listen string
	// PublicURL is the base URL handlers use to reach the HTTP listener (response URLs when
	// TLS is off); default derived from the listener's address.
	PublicURL string
	// TLSListen is the HTTPS listen address, e.g. ":443"; empty: no TLS.
	TLSListen string
	// TLSCert and TLSKey are PEM files of the server certificate; both empty: a certificate
	// from a CA that cairn makes in Dir/tls.
	TLSCert, TLSKey string
	// TLSPublicURL is the base URL handlers use to reach the TLS listener, and then the base
	// of every response URL; default https://localhost, with the port unless it is 443.
	TLSPublicURL string
	// Token is the API's bearer token; empty: read Dir/token, creating it (32 random bytes,
	// hex) when absent.
	Token string
	// NoAuth serves the API without a token. Allowed only when every listener is loopback.
	NoAuth bool
	// Tenants maps more tokens to their tenants (`cairn server --tenants`); Token is tenant
	// "default"'s. Tenants own what they create (see docs/server.md, Security). Not allowed
	// with NoAuth.
	Tenants map[string]string
	// AllowTenantCode lets every tenant run code on the server: functions with code
	// (runtimes provided, nodejs, terraform-provider) and local-exec provisioners. Without it, on a server with Tenants,
	// only tenant "default" (the server's own token) may: such code runs as the server's user.
	AllowTenantCode bool
	// ServiceTokenAllow lists the hosts and CIDRs that ServiceTokens and url functions may
	// reach (`cairn server --service-token-allow`; an entry may hold several, comma-separated).
	// Empty: every host, except that a server with Tenants refuses loopback, link-local,
	// unspecified and cloud-metadata addresses. See egress.New.
	ServiceTokenAllow []string
	// Region and AccountID are the engine's pseudo parameters; engine defaults when empty.
	Region, AccountID string
	// PluginDirs are searched for Terraform provider plugins before the places terraform's
	// CLI configuration names (TF_CLI_CONFIG_FILE, ~/.terraformrc, the implied mirrors).
	PluginDirs []string
	// SecretsKeyFile holds the keys that encrypt secrets in the state database (see
	// secrets.LoadFile); default DefaultKeyFile(Dir), beside Dir. Created with mode 0600 when absent; refused
	// when its group or others may access it.
	SecretsKeyFile string
	// SecretsKey gives those keys instead of a file (CAIRN_SECRETS_KEY): base64 of 32 bytes,
	// several separated by commas, the first of which encrypts. Not with SecretsKeyFile.
	SecretsKey string
	// Logger receives the access log and lifecycle messages; nil: discard.
	Logger *slog.Logger
	// Limits bound each request's template parse and evaluation, and each run's evaluations
	// (`cairn server --max-depth` ...); zero fields take budget.Defaults.
	Limits budget.Limits
	// AcceptIAMNoop lets templates hold IAM and RAM roles and policies (lambda.IAMTypes),
	// recorded without applying anything (`cairn server --accept-iam-noop`, env
	// CAIRN_ACCEPT_IAM_NOOP). Without it such a resource fails validation, naming the flag.
	AcceptIAMNoop bool
	// InProcess says this cairn is the CLI's own, started in-process for one command: its only
	// client is on this machine as this user, so a configuration's directory the client sends
	// is where Terraform providers and provisioners run (engine.Options.ClientDirs). A server
	// (`cairn server`) leaves it false: each run gets a directory of its own.
	InProcess bool
	// RememberListen makes the HTTP listener's loopback address stable per Dir (the CLI's
	// in-process cairn): the first start picks a port and remembers it in Dir/listen, later
	// starts listen there again, so that a handler's answer to a request of a run that died
	// reaches the next run, which resumes the operation. Listen is then not used. See
	// rememberedListener for what happens when the address is taken.
	RememberListen bool
	// KubeListen serves cairn's Kubernetes API on this HTTPS address (cairn-kube, started and
	// supervised here); empty: not served. KubeBinary is its path ("" looks beside cairn and
	// on PATH); KubeHosts are extra names for its certificate.
	KubeListen string
	KubeBinary string
	KubeHosts  []string
	// Database is the URL of a PostgreSQL database to keep the state in
	// (postgres://USER@HOST/DB?sslmode=...), shared by every replica; empty: SQLite in
	// Dir/state.db.
	Database string
	// OIDC, when not nil, accepts ID tokens of one issuer as bearer tokens.
	OIDC *auth.OIDCConfig
	// ResponseNotice is how long a custom-resource request may go unanswered before an event
	// on its resource says what cairn waits for and where (`cairn server --response-notice`);
	// default one minute.
	ResponseNotice time.Duration
}

// App is a running cairn.
type App struct {
	log       *slog.Logger
	store     backend
	reg       *provider.Registry
	eng       *engine.Engine
	fns       *function.Manager
	local     *localFunctions // terraform-provider functions served in process
	api       *server.Server
	servers   []*http.Server
	kube      *kubeproc.Proc // nil without KubeListen
	kubeHosts []string       // --kube-host: the first is the name /v1/kube advertises
	plugins   *plugins
	stopSync  context.CancelFunc // ends the kube reconciler; nil when none runs
	stopWatch context.CancelFunc // ends the watch of other replicas' writes; nil when none runs
	fresh     newConns           // connections without a request yet: closed at once on Shutdown
	listeners []net.Listener     // closed by closeAll even if never served
	serving   sync.WaitGroup
	url       string // HTTP, as this machine reaches it
	publicURL string // HTTP, as handlers reach it
	tlsURL    string // HTTPS, as handlers reach it; "" without TLS
	token     string
	authn     *auth.Authenticator // set before serving; plugins get tokens of tenants from it
	caFile    string
	stopOnce  sync.Once
	stopErr   error
}

// Start opens the state in cfg.Dir, resumes unfinished operations and serves the API. ctx
// bounds the start only; the app runs until Shutdown.
func Start(ctx context.Context, cfg Config) (_ *App, err error) {
	cfg = withDefaults(cfg)
	if err := checkNoAuth(cfg); err != nil {
		return nil, err
	}
	policy, err := egress.New(cfg.ServiceTokenAllow, len(cfg.Tenants) > 0)
	if err != nil {
		return nil, fmt.Errorf("invalid --service-token-allow: %w", err)
	}
	a := &App{log: cfg.Logger}
	defer func() {
		if err != nil {
			a.closeAll(context.WithoutCancel(ctx))
		}
	}()
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create state directory: %w", err)
	}
	if a.token, err = resolveToken(cfg); err != nil {
		return nil, err
	}
	ring, err := a.keyring(cfg)
	if err != nil {
		return nil, err
	}
	store, err := openBackend(ctx, cfg, ring)
	if err != nil {
		return nil, err
	}
	a.store = store
	if a.authn, err = a.authenticator(cfg); err != nil {
		return nil, err
	}
	key, err := store.Key(ctx, "response-url", random32)
	if err != nil {
		return nil, fmt.Errorf("cannot get the response-URL signing key: %w", err)
	}

	lns, err := a.listen(ctx, cfg)
	if err != nil {
		return nil, err
	}
	responseURL := a.publicURL
	if lns.tls != nil {
		responseURL = a.tlsURL
	}

	if a.fns, err = newFunctions(cfg, store, a.caFile, policy); err != nil {
		return nil, err
	}
	cr := customresource.New(customresource.Config{Store: crStore{store}, Key: key, ResponseURL: responseURL,
		Functions: crInvoker{a.fns}, Policy: policy, Logger: cfg.Logger, WaitNotice: cfg.ResponseNotice})
	a.reg = provider.NewRegistry()
	for _, pattern := range []string{"Custom::*", "AWS::CloudFormation::CustomResource", "ALIYUN::ROS::CustomResource"} {
		a.reg.Register(pattern, cr)
	}
	fnTypes := lambda.New(stackFunctions{a.fns})
	for _, typ := range lambda.Types {
		a.reg.Register(typ, fnTypes)
	}
	a.reg.Register(kubeobject.Type, &kubeobject.Provider{Properties: kubeobject.CloudFormation,
		Open: func(t string) (provider.Provider, error) { return a.openKubePlugin(cfg, t, "") }})
	iam := &lambda.IAM{Accept: cfg.AcceptIAMNoop}
	for _, typ := range lambda.IAMTypes {
		a.reg.Register(typ, iam)
	}
	// The registry checks function URNs against --region only when one is given.
	reg := registry.New(registry.Options{Store: store, Region: cfg.Region})
	plugins, err := newPlugins(cfg.PluginDirs, a.log)
	if err != nil {
		return nil, err
	}
	a.plugins = plugins
	a.local = &localFunctions{log: a.log}
	plugins.kube = func(t, dir string) (provider.Provider, error) { return a.openKubePlugin(cfg, t, dir) }
	plugins.private = privateProviders{reg: reg, fns: a.fns, local: a.local, urlClient: urlFunctionClient(policy)}
	replica := engine.NewOwner()
	metrics, observer := newMetrics(replica, backendName(cfg))
	a.eng, err = engine.New(engine.Options{Store: store, Providers: a.reg, Plugins: plugins, Region: cfg.Region, AccountID: cfg.AccountID,
		Limits: cfg.Limits, RunCode: tenantCode(cfg), ClientDirs: cfg.InProcess, RunsDir: filepath.Join(cfg.Dir, "runs"),
		Owner: replica, Observer: observer})
	if err != nil {
		return nil, fmt.Errorf("cannot start the engine: %w", err)
	}
	if err := a.eng.Resume(ctx); err != nil {
		return nil, err
	}
	a.watchReplicas(cr)

	var kube func() (api.KubeEndpoint, error)
	var enable func(context.Context, api.KubeEnableRequest) (api.KubeEnableResponse, error)
	if cfg.KubeListen != "" {
		kube, enable = a.kubeEndpoint, a.kubeEnable
	}
	a.api = server.New(server.Config{Engine: a.eng, Responses: cr.ResponseHandler(), Functions: function.Service{M: a.fns}, Auth: a.authn,
		Accounts: store, Registry: reg, Logger: cfg.Logger, Metrics: metrics, Kube: kube, KubeEnable: enable})
	a.serve(lns.http, nil)
	if lns.tls != nil {
		a.serve(lns.tls, lns.tlsConfig)
	}
	if err := a.startKube(ctx, cfg); err != nil { // kube.go; it checks tokens with the API served above
		return nil, err
	}
	a.log.Info("cairn is serving", "url", a.url, "publicURL", a.publicURL, "tlsURL", a.tlsURL,
		"responseURL", responseURL, "dir", cfg.Dir, "auth", a.token != "")
	return a, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Dir == "" {
		cfg.Dir = ".cairn"
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:8080"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// serve serves the API on ln, over TLS when tlsConfig is set.
func (a *App) serve(ln net.Listener, tlsConfig *tls.Config) {
	srv := &http.Server{
		Handler:           a.api.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
		ConnState:         a.fresh.track,
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	a.servers = append(a.servers, srv)
	a.serving.Add(1)
	go func() {
		defer a.serving.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("cannot serve", "addr", ln.Addr().String(), "err", err)
		}
	}()
}

// URL is the base URL of the HTTP API as this machine reaches it, such as
// "http://127.0.0.1:8080" (a loopback address when listening on every interface).
func (a *App) URL() string { return a.url }

// TLSURL is the base URL of the HTTPS listener as handlers reach it (the base of response
// URLs), or "" when TLS is off.
func (a *App) TLSURL() string { return a.tlsURL }

// Token is the API's bearer token, "" with NoAuth.
func (a *App) Token() string { return a.token }

// CAFile is the path of the self-made CA certificate that handlers must trust, or "" when TLS
// is off or uses TLSCert/TLSKey.
func (a *App) CAFile() string { return a.caFile }

// Shutdown stops accepting requests, ends long polls, lets requests in flight finish, stops
// the engine (unfinished operations stay running in the store and resume at the next Start)
// and closes the store. It returns when all is done or ctx is; later calls return the first
// call's result.
func (a *App) Shutdown(ctx context.Context) error {
	a.stopOnce.Do(func() { a.stopErr = a.closeAll(ctx) })
	return a.stopErr
}

// closeAll releases whatever Start got, in reverse order.
func (a *App) closeAll(ctx context.Context) error {
	var errs []error
	if a.stopSync != nil {
		a.stopSync()
	}
	if a.stopWatch != nil {
		a.stopWatch()
	}
	if a.api != nil {
		a.api.Close()
	}
	a.fresh.closeAll() // and any connection opened from now on
	for _, srv := range a.servers {
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("cannot stop the HTTP server: %w", err))
		}
	}
	for _, ln := range a.listeners {
		ln.Close() // listeners not yet served; served ones are closed already
	}
	a.serving.Wait()
	if a.eng != nil {
		if err := a.eng.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if a.kube != nil { // after the engine: its steps in flight may still call the kube API
		if err := a.kube.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if a.fns != nil {
		_ = a.fns.Close() // kills the functions' processes; never fails
		a.local.close()
	}
	if a.reg != nil {
		if err := a.reg.Close(); err != nil {
			errs = append(errs, fmt.Errorf("cannot close providers: %w", err))
		}
	}
	if a.store != nil {
		if err := a.store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("cannot close state: %w", err))
		}
	}
	return errors.Join(errs...)
}

func random32() ([]byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return b, nil
}

// RunsHere reports whether operation id runs in this cairn, or is about to, taken over from a
// holder that is gone (a killed CLI process): the CLI's in-process cairn follows such an
// operation to its end before it runs the user's command.
func (a *App) RunsHere(ctx context.Context, id string) bool { return a.eng.RunsHere(ctx, id) }
