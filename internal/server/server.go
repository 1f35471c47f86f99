package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/auth"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/registry"
	"github.com/cairn-dev/cairn/internal/state"
)

// Engine is what the server needs of *engine.Engine. It is an interface so that tests can
// use a fake.
type Engine interface {
	Commands
	Queries
	States
}

// States move a Terraform-language stack's state in and out as terraform state files.
type States interface {
	PullState(ctx context.Context, stack string, opts api.StatePullOptions) ([]byte, error)
	PushState(ctx context.Context, stack string, req api.StatePushRequest) (api.StatePushResponse, error)
}

var _ Engine = (*engine.Engine)(nil)

// Commands change stacks.
type Commands interface {
	Validate(ctx context.Context, req api.ValidateRequest) (api.ValidateResponse, error)
	Preview(ctx context.Context, stack string, req api.DeployRequest) (api.PreviewResponse, error)
	Deploy(ctx context.Context, stack string, req api.DeployRequest) (api.Operation, error)
	Delete(ctx context.Context, stack string, req api.DeleteRequest) (api.Operation, error)
	Cancel(ctx context.Context, stack string) (api.Operation, error)
	// ForceUnlock ends the running operation of stack at once, without rollback; by names who
	// forced it in the stack's event.
	ForceUnlock(ctx context.Context, stack, by string) (api.Operation, error)
	Import(ctx context.Context, stack string, req api.ImportRequest) (api.Resource, error)
	Refresh(ctx context.Context, stack string, req api.RefreshRequest) (api.RefreshResponse, error)
}

// Queries read stacks, events and operations.
type Queries interface {
	Stacks(ctx context.Context) ([]api.Stack, error)
	Stack(ctx context.Context, name string) (api.Stack, error)
	// StackBrief is Stack without the resources' attributes.
	StackBrief(ctx context.Context, name string) (api.Stack, error)
	// Outputs returns a stack's outputs, secrets masked unless showSecrets.
	Outputs(ctx context.Context, name string, showSecrets bool) ([]api.Output, error)
	Events(ctx context.Context, stack string, after int64, limit int) ([]api.Event, error)
	// LastEvent returns the stack's newest event; ok is false when it has none.
	LastEvent(ctx context.Context, stack string) (ev api.Event, ok bool, err error)
	Operation(ctx context.Context, id string) (api.Operation, error)
	// Wait blocks until operation id has finished or ctx is done, and returns it as it is then.
	Wait(ctx context.Context, id string) (api.Operation, error)
	// Notify returns a channel closed at the next event of any stack.
	Notify() <-chan struct{}
}

// Config configures a Server. Engine is required; the other fields have usable zero values.
type Config struct {
	Engine Engine
	// Responses serves /v1/responses/... (the custom-resource response URLs, PUT). It gets
	// every method, the request unchanged and no bearer auth. Nil: the route answers 404.
	Responses http.Handler
	// Functions serves /v1/functions/...; nil: those routes answer 404.
	Functions Functions
	// Token is the bearer token every /v1 route but /v1/responses/ requires; it is the token
	// of tenant "default". Empty, and no Tenants: no auth, and every caller is "default".
	Token string
	// Tenants maps more tokens to the tenants they stand for (see internal/tenant). A token is
	// sent as "Authorization: Bearer T" or "X-Auth-Token: T".
	Tenants map[string]string
	// Auth checks the tokens callers present; nil: one made of Token and Tenants.
	Auth *auth.Authenticator
	// Accounts keeps the tokens created through the API, the grants and the audit log of
	// every change; nil: /v1/tokens, /v1/grants and /v1/audit answer 404 and nothing is audited.
	Accounts state.Accounts
	// Registry serves /v1/private-providers/...; nil: those routes answer 404.
	Registry *registry.Service
	// Logger receives the access log and the detail of internal errors. Nil: discard.
	Logger *slog.Logger
	// Kube tells where cairn's Kubernetes API listens, for GET /v1/kube; nil: not served.
	Kube func() (api.KubeEndpoint, error)
	// KubeEnable offers resource types as CRDs (POST /v1/kube/enable, the admin's); nil: 404.
	KubeEnable func(ctx context.Context, req api.KubeEnableRequest) (api.KubeEnableResponse, error)
	// Metrics receives the request counters and latency histograms, and is served on
	// /metrics. Nil: a private registry.
	Metrics *prometheus.Registry
}

// Limits of the API.
const (
	// MaxBodyBytes bounds request bodies (templates included).
	MaxBodyBytes = 10 << 20
	// MaxWait bounds the wait of a long poll.
	MaxWait = 60 * time.Second
)

// Server is cairn's HTTP API. Build it with New and serve Handler.
type Server struct {
	eng       Engine
	responses http.Handler
	fns       Functions
	auth      *auth.Authenticator
	accounts  state.Accounts
	reg       *registry.Service
	kube      func() (api.KubeEndpoint, error)
	enable    func(ctx context.Context, req api.KubeEnableRequest) (api.KubeEnableResponse, error)
	log       *slog.Logger
	metrics   *prometheus.Registry
	m         *httpMetrics
	handler   http.Handler
	closing   chan struct{} // closed by Close: long polls answer at once
	closeOnce sync.Once
}

// New returns a server for cfg. It panics when cfg.Engine is nil (a programming error).
func New(cfg Config) *Server {
	if cfg.Engine == nil {
		panic("server: Config.Engine is required")
	}
	s := &Server{eng: cfg.Engine, responses: cfg.Responses, fns: cfg.Functions, log: cfg.Logger, metrics: cfg.Metrics,
		closing: make(chan struct{})}
	s.auth, s.accounts = cfg.Auth, cfg.Accounts
	if s.auth == nil {
		s.auth = auth.New(auth.Config{ServerToken: cfg.Token, Tenants: cfg.Tenants})
	}
	s.reg = cfg.Registry
	s.kube = cfg.Kube
	s.enable = cfg.KubeEnable
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.metrics == nil {
		s.metrics = prometheus.NewRegistry()
	}
	s.m = newHTTPMetrics(s.metrics)
	s.handler = s.observe(s.routes())
	return s
}

// Handler returns the HTTP handler of the whole API.
func (s *Server) Handler() http.Handler { return s.handler }

// Close ends the long polls in flight and those still to come: they answer as if their wait
// had elapsed. Call it before http.Server.Shutdown so that a shutdown need not wait for them.
// Other requests are served as before.
func (s *Server) Close() { s.closeOnce.Do(func() { close(s.closing) }) }
