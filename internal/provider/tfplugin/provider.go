// Package tfplugin is cairn's client of Terraform and OpenTofu provider plugins. It launches a
// provider binary with the go-plugin handshake terraform uses, speaks tfplugin5 or tfplugin6
// gRPC to it through one adapter per protocol version (protocol.go), and does what terraform
// core does around the calls — decode configuration by schema, build the proposed new state,
// check plans and applied results, pass private data through, upgrade stored state — so that
// the engine sees an ordinary provider.Provider.
package tfplugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/stopgrace"
)

// TerraformVersion is the terraform version cairn announces in Configure, for providers that
// look at it. It is the release whose behaviour cairn follows.
const TerraformVersion = "1.11.4"

// DefaultStopGrace is how long a call whose context ended may still run after the provider
// was asked to stop, before cairn abandons it.
const DefaultStopGrace = stopgrace.Default

// stopTimeout bounds the Stop call itself.
const stopTimeout = 10 * time.Second

// Config names a provider binary to run.
type Config struct {
	Name       string // local name, e.g. "time": it prefixes every error
	Executable string
	Dir        string        // the process's working directory; "" = this process's
	Env        []string      // more environment variables, KEY=VALUE, for this provider only
	Logger     *slog.Logger  // receives the provider's log at debug level; nil discards it
	StopGrace  time.Duration // 0 means DefaultStopGrace
	// SchemaCacheDir and PackageHash (the package's h1: hash) name the disk cache of the
	// package's schemas (schemacache.go); either empty disables it.
	SchemaCacheDir string
	PackageHash    string
}

// Options configure a Provider over an existing connection (NewFromConn).
type Options struct {
	Name      string
	Logger    *slog.Logger
	StopGrace time.Duration
	// SchemaCacheKey identifies the provider build behind the connection (e.g. a binary's
	// hash). When set, schemas are cached under it as for launched binaries; empty disables
	// the cache.
	SchemaCacheKey string
}

// Provider is one provider instance: one plugin process (or connection) and one provider
// configuration. The process starts on the first call and its schemas are read once. Every
// method is safe for concurrent use.
type Provider struct {
	name      string
	exe       string // "" over NewFromConn
	dir       string // the process's working directory
	env       []string
	cacheKey  string
	log       *slog.Logger
	stopGrace time.Duration

	sem       chan struct{} // held while starting or closing
	procMu    sync.Mutex    // guards proc for Close, which may not get sem
	proc      *process      // nil over NewFromConn; set under sem (and procMu) before loaded
	proto     protocolClient
	launchErr error
	loaded    atomic.Pointer[schemas] // set once the provider is usable
	closed    atomic.Bool

	// the disk cache's schemas, read once, used until the process runs (lazy.go)
	diskPath    string
	diskOnce    sync.Once
	disk        atomic.Pointer[schemas]
	diskVersion int // the protocol version of disk's entry

	// a configuration handed over by ConfigureLazily, sent before the first call that needs
	// the provider; cfgErr is its failure, returned by every later call (both under sem)
	pending   atomic.Pointer[provider.ConfigureRequest]
	cfgFailed atomic.Bool
	cfgErr    error

	stopOnce sync.Once

	// validated remembers the diagnostics of each resource configuration already validated
	// (type + msgpack config): ValidateResourceConfig is a pure function of the config, and
	// the engine checks a configuration without references twice (when loading and before
	// applying), so half of those calls are answered here.
	validated sync.Map // string -> diag.Diagnostics
}

var _ provider.Provider = (*Provider)(nil)

// New returns a provider that launches cfg.Executable when first used.
func New(cfg Config) *Provider {
	return &Provider{name: cfg.Name, exe: cfg.Executable, dir: cfg.Dir, env: cfg.Env, log: cfg.Logger, stopGrace: grace(cfg.StopGrace),
		diskPath: diskSchemaPath(cfg.SchemaCacheDir, cfg.PackageHash), sem: make(chan struct{}, 1)}
}

// NewFromConn returns a provider speaking protocolVersion (5 or 6) over conn, which the
// caller owns: Close does not close it. This is the seam for transports other than a local
// go-plugin process.
func NewFromConn(conn grpc.ClientConnInterface, protocolVersion int, opts Options) (*Provider, error) {
	pc, err := newProtocolClient(conn, protocolVersion)
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", opts.Name, err)
	}
	return &Provider{name: opts.Name, log: opts.Logger, stopGrace: grace(opts.StopGrace), cacheKey: opts.SchemaCacheKey,
		proto: pc, sem: make(chan struct{}, 1)}, nil
}

// NewV5 is NewFromConn for protocol 5, which cannot fail: the protocol of an RFS private
// provider's HTTP function.
func NewV5(conn grpc.ClientConnInterface, opts Options) *Provider {
	return &Provider{name: opts.Name, log: opts.Logger, stopGrace: grace(opts.StopGrace), cacheKey: opts.SchemaCacheKey,
		proto: newConn5(conn), sem: make(chan struct{}, 1)}
}

func grace(d time.Duration) time.Duration { return stopgrace.Or(d) }

// ProtocolVersion is the plugin protocol in use, 0 before the process started.
func (p *Provider) ProtocolVersion() int {
	if p.loaded.Load() == nil {
		return 0
	}
	return p.proto.version()
}

var errClosed = errors.New("closed")

// start starts the process and reads the schemas the first time, and returns them.
func (p *Provider) start(ctx context.Context) (*schemas, error) {
	if p.closed.Load() {
		return nil, fmt.Errorf("provider %s: %w", p.name, errClosed)
	}
	if s := p.loaded.Load(); s != nil {
		return s, nil
	}
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-p.sem }()
	if s := p.loaded.Load(); s != nil {
		return s, nil
	}
	if p.closed.Load() {
		return nil, fmt.Errorf("provider %s: %w", p.name, errClosed)
	}
	if p.proto == nil {
		if p.launchErr != nil {
			return nil, p.launchErr
		}
		if p.cacheKey == "" {
			p.cacheKey = executableKey(p.exe)
		}
		proc, err := launch(p.name, p.exe, p.dir, p.env, p.log)
		if err != nil {
			p.launchErr = err
			return nil, err
		}
		if p.proto, err = newProtocolClient(proc.conn, proc.version); err != nil {
			proc.client.Kill()
			p.launchErr = fmt.Errorf("provider %s: %w", p.name, err)
			return nil, p.launchErr
		}
		p.procMu.Lock()
		p.proc = proc
		p.procMu.Unlock()
	}
	s, err := p.loadSchemas(ctx)
	if err != nil {
		return nil, err
	}
	p.loaded.Store(s)
	return s, nil
}

// call runs one RPC. When ctx ends first, the provider is asked (once per process) to stop
// what it is doing, as terraform does on Ctrl-C, and the RPC is left to finish — a provider
// that honours Stop returns promptly, and an apply that did complete reports the object it
// made — for up to the stop grace, after which it is abandoned. The RPC runs on a context that
// only that grace cancels; call then returns ctx.Err(), and whatever fn stored stays valid if
// fn returned nil.
func (p *Provider) call(ctx context.Context, method string, fn func(context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := stopgrace.Run(ctx, p.stopGrace, p.stop, fn)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return p.callErr(method, err)
	}
	return nil
}

// stop sends Stop/StopProvider, once per process.
func (p *Provider) stop() {
	p.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		msg, err := p.proto.stopProvider(ctx)
		if p.log != nil {
			p.log.Debug("provider asked to stop", "provider", p.name, "error", err, "reply", msg)
		}
	})
}

// callErr describes a failed RPC; when the plugin process died, it says so and adds the last
// lines the provider wrote to stderr (a panic's stack, usually).
func (p *Provider) callErr(method string, err error) error {
	if p.proc != nil {
		switch status.Code(err) {
		case codes.Unavailable, codes.Canceled, codes.Unknown, codes.Internal:
			// go-plugin notices the exit a moment after the connection breaks
			for i := 0; i < 50 && !p.proc.client.Exited(); i++ {
				time.Sleep(20 * time.Millisecond)
			}
		}
		if p.proc.client.Exited() {
			return fmt.Errorf("provider %s: plugin exited: %s: %w%s", p.name, method, err, p.proc.stderr.suffix())
		}
	}
	return fmt.Errorf("provider %s: %s: %w", p.name, method, err)
}

// loadSchemas reads the schemas: GetMetadata first, and when the provider says GetSchema is
// optional and this binary's schemas are cached, no GetSchema at all.
func (p *Provider) loadSchemas(ctx context.Context) (*schemas, error) {
	var md metadata
	err := p.call(ctx, "GetMetadata", func(ctx context.Context) (err error) {
		md, err = p.proto.getMetadata(ctx)
		return err
	})
	switch {
	case err == nil:
		if md.diags.HasErrors() {
			return nil, fmt.Errorf("provider %s: GetMetadata: %w", p.name, md.diags.Err())
		}
		if md.caps.schemaOptional {
			cached := cachedSchemas(p.cacheKey, p.proto.version())
			if cached == nil {
				cached = p.diskSchemas(p.proto.version())
			} else {
				p.storeDisk(cached)
			}
			if cached != nil {
				s := *cached
				s.caps = md.caps
				return &s, nil
			}
		}
	case ctx.Err() != nil:
		return nil, err
	case !isUnimplemented(err):
		return nil, err
	}
	var s *schemas
	var raw []byte
	err = p.call(ctx, "GetSchema", func(ctx context.Context) (err error) {
		s, raw, err = p.proto.getSchemas(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	if s.diags.HasErrors() {
		return nil, fmt.Errorf("provider %s: cannot read its schema: %w", p.name, s.diags.Err())
	}
	s.raw = raw
	storeSchemas(p.cacheKey, p.proto.version(), s)
	p.storeDisk(s)
	return s, nil
}

// Capabilities implements provider.Provider: Terraform providers can refresh.
func (p *Provider) Capabilities() provider.Capabilities { return provider.Capabilities{Read: true} }

// Schema returns the decoder spec and implied type of a resource type, data source or the
// provider configuration.
func (p *Provider) Schema(ctx context.Context, req provider.SchemaRequest) (provider.Schema, error) {
	s, err := p.known(ctx)
	if err != nil {
		return provider.Schema{}, err
	}
	sc, err := s.lookup(p.name, req.Kind, req.Type)
	if err != nil {
		return provider.Schema{}, err
	}
	return provider.Schema{Spec: sc.spec, ImpliedType: sc.ty, Unknown: sc.block.unknown(), Attributes: sc.block.attributes()}, nil
}

// closeGrace is how long Close waits, beyond the stop grace, for a call holding sem.
const closeGrace = 5 * time.Second

// Close ends the plugin process (go-plugin's Kill: a graceful exit, then SIGKILL after two
// seconds). Over NewFromConn it only makes later calls fail; the connection is the caller's.
func (p *Provider) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	// A call holding sem may hang (a lazy ConfigureProvider retrying credentials): after a
	// grace, the process is ended under it, and the call fails with its connection.
	grace := time.NewTimer(p.stopGrace + closeGrace)
	defer grace.Stop()
	select {
	case p.sem <- struct{}{}:
		defer func() { <-p.sem }()
	case <-grace.C:
	}
	p.procMu.Lock()
	proc := p.proc
	p.procMu.Unlock()
	if proc != nil {
		proc.client.Kill()
	}
	return nil
}
