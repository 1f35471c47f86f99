package function

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/internal/egress"
	"github.com/cairn-dev/cairn/internal/tenant"
)

// Store keeps function definitions (state.Functions through an adapter in app). Names are
// unique per tenant; another tenant's function is never found.
type Store interface {
	// PutFunction inserts d, or returns an error wrapping ErrExists when d.Tenant has one of
	// that name.
	PutFunction(ctx context.Context, d Definition) error
	// GetFunction returns tenant's function called name, or an error wrapping ErrNotFound.
	GetFunction(ctx context.Context, tenant, name string) (Definition, error)
	ListFunctions(ctx context.Context, tenant string) ([]Definition, error)
	// ReplaceFunction replaces d.Tenant's function d.Name (keeping its CreatedAt), or returns
	// an error wrapping ErrNotFound.
	ReplaceFunction(ctx context.Context, d Definition) error
	// DeleteFunction removes tenant's function name, or returns an error wrapping ErrNotFound.
	DeleteFunction(ctx context.Context, tenant, name string) error
	// FunctionCode returns the zip of tenant's function name (nil: none kept).
	FunctionCode(ctx context.Context, tenant, name string) ([]byte, error)
}

// Config configures a Manager. Store and Dir are required.
type Config struct {
	Store Store
	// Dir holds the functions' code (Dir/code/NAME-ID), logs (Dir/logs) and cairn's runtime
	// files (Dir/runtime).
	Dir string
	// Region and AccountID make the ARN a function is invoked as; default us-east-1 and
	// 123456789012, as the engine's.
	Region, AccountID string
	// Env is added to every process's environment (such as NODE_EXTRA_CA_CERTS and
	// SSL_CERT_FILE, so handlers trust cairn's CA). Processes inherit nothing else but PATH.
	Env []string
	// Client POSTs to url functions; default: a client with dial and TLS timeouts that dials
	// and redirects only as Policy allows (each invocation is bounded by the function's
	// timeout).
	Client *http.Client
	// Policy says which hosts url functions may reach (the service-token policy); Create
	// refuses a URL it refuses by its host alone. nil allows every host.
	Policy *egress.Policy
	// Node is the node executable of the nodejs runtime; default "node" on PATH.
	Node string
	// Python is the interpreter of the python runtime; default "python3" on PATH.
	Python string
	// RunCode says whether a tenant may create functions that run code on this machine (every
	// kind but url): such code runs as cairn's user, sees its files and its network. Nil: all.
	RunCode func(ctx context.Context) bool
}

// maxQueued bounds asynchronous invocations waiting or running, over every function.
const maxQueued = 1000

// Manager creates, stores, resolves and invokes functions. It is safe for concurrent use.
type Manager struct {
	cfg   Config
	store Store
	logs  *logbook

	ctx    context.Context // async invocations; cancelled by Close
	cancel context.CancelFunc
	async  sync.WaitGroup

	mu      sync.Mutex
	pools   map[string]*pool
	queued  int
	closed  bool
	written map[string]bool // runtime bootstrap files written by this manager
}

// New returns a Manager for cfg.
func New(cfg Config) (*Manager, error) {
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.AccountID == "" {
		cfg.AccountID = "123456789012"
	}
	if cfg.Client == nil {
		cfg.Client = cfg.Policy.Client(&http.Transport{TLSHandshakeTimeout: 10 * time.Second, MaxIdleConnsPerHost: 16,
			IdleConnTimeout: 90 * time.Second}, &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second})
	}
	dir, err := filepath.Abs(cfg.Dir) // processes run in their code directory
	if err != nil {
		return nil, fmt.Errorf("cannot find the functions directory: %w", err)
	}
	cfg.Dir = dir
	for _, d := range []string{"code", "logs", "runtime"} {
		if err := os.MkdirAll(filepath.Join(cfg.Dir, d), 0o700); err != nil {
			return nil, fmt.Errorf("cannot create the functions directory: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{cfg: cfg, store: cfg.Store, logs: &logbook{dir: filepath.Join(cfg.Dir, "logs"), now: time.Now},
		ctx: ctx, cancel: cancel, pools: map[string]*pool{}, written: map[string]bool{}}, nil
}

// Every method acts for the tenant ctx carries (internal/tenant): functions of other tenants
// are invisible to it, and a token resolves inside the caller's tenant only.

// Create checks d, copies its code (a zip archive, see ZipDir) into the data directory, and
// stores it. A url function takes no code.
func (m *Manager) Create(ctx context.Context, d Definition, code []byte) (Definition, error) {
	d, err := m.prepareDefinition(ctx, d, code)
	if err != nil {
		return Definition{}, err
	}
	d.CreatedAt = time.Now().UTC().Truncate(time.Millisecond)
	if err := m.store.PutFunction(ctx, d); err != nil {
		if d.CodeDir != "" {
			_ = os.RemoveAll(d.CodeDir)
		}
		return Definition{}, err
	}
	m.logs.remove(d.key()) // an earlier function of that name
	return d, nil
}

// prepareDefinition checks d for the caller's tenant and unpacks its code into a directory of
// its own.
func (m *Manager) prepareDefinition(ctx context.Context, d Definition, code []byte) (Definition, error) {
	d, err := d.withDefaults()
	if err != nil {
		return Definition{}, err
	}
	d.Tenant = tenant.From(ctx)
	if d.Kind != KindURL && m.cfg.RunCode != nil && !m.cfg.RunCode(ctx) {
		return Definition{}, invalidf("a %s function runs code on the cairn server as the server's own user; "+
			"this server lets only its operator's tenant create one (start it with --allow-tenant-code to let every tenant), "+
			"or use a url function that points at your own endpoint", d.Kind)
	}
	if d.Kind == KindURL && len(code) > 0 {
		return Definition{}, invalidf("a url function takes no code")
	}
	if err := m.cfg.Policy.CheckURL(ctx, d.URL); d.Kind == KindURL && err != nil {
		return Definition{}, invalidf("a url function's URL: %v", err)
	}
	if d.Kind != KindURL {
		if len(code) == 0 {
			return Definition{}, invalidf("a %s function needs code (a directory)", d.Kind)
		}
		dir := filepath.Join(m.cfg.Dir, "code", d.key()+"-"+newRequestID()[:8])
		if err := unzip(code, dir); err != nil {
			_ = os.RemoveAll(dir)
			return Definition{}, err
		}
		d.CodeDir, d.Code = dir, code
		if err := checkEntrypoint(d); err != nil {
			_ = os.RemoveAll(dir)
			return Definition{}, err
		}
	}
	return d, nil
}

// Update replaces the function d.Name with d and its code (as Create takes them): the next
// invocation runs the new definition. Processes of the old one are stopped, invocations in
// progress included.
func (m *Manager) Update(ctx context.Context, d Definition, code []byte) (Definition, error) {
	old, err := m.Get(ctx, d.Name)
	if err != nil {
		return Definition{}, err
	}
	d, err = m.prepareDefinition(ctx, d, code)
	if err != nil {
		return Definition{}, err
	}
	d.CreatedAt = old.CreatedAt
	if err := m.store.ReplaceFunction(ctx, d); err != nil {
		if d.CodeDir != "" {
			_ = os.RemoveAll(d.CodeDir)
		}
		return Definition{}, err
	}
	m.retire(old)
	return d, nil
}

// retire stops the processes of a definition that is gone and removes its code.
func (m *Manager) retire(d Definition) {
	m.mu.Lock()
	p := m.pools[d.key()]
	if p != nil && p.def.same(d) {
		delete(m.pools, d.key())
	} else {
		p = nil // already replaced by a pool of the new definition, which pool() closed this one for
	}
	m.mu.Unlock()
	if p != nil {
		p.close()
	}
	if d.CodeDir != "" && strings.HasPrefix(d.CodeDir, filepath.Join(m.cfg.Dir, "code")+string(filepath.Separator)) {
		_ = os.RemoveAll(d.CodeDir)
	}
}

// Get returns the function called name.
func (m *Manager) Get(ctx context.Context, name string) (Definition, error) {
	if !validName.MatchString(name) {
		// Not a function name (one holding '/' from a path's %2F, say): no function has it,
		// and it must not reach the store's tenant-qualified keys.
		return Definition{}, fmt.Errorf("function %q: %w", name, ErrNotFound)
	}
	return m.store.GetFunction(ctx, tenant.From(ctx), name)
}

// List returns every function, by name.
func (m *Manager) List(ctx context.Context) ([]Definition, error) {
	ds, err := m.store.ListFunctions(ctx, tenant.From(ctx))
	slices.SortFunc(ds, func(a, b Definition) int { return strings.Compare(a.Name, b.Name) })
	return ds, err
}

// Delete removes a function, stops its processes and removes its code and logs.
func (m *Manager) Delete(ctx context.Context, name string) error {
	d, err := m.Get(ctx, name)
	if err != nil {
		return err
	}
	if err := m.store.DeleteFunction(ctx, d.Tenant, name); err != nil {
		return err
	}
	m.mu.Lock()
	p := m.pools[d.key()]
	delete(m.pools, d.key())
	m.mu.Unlock()
	if p != nil {
		p.close()
	}
	if d.CodeDir != "" && strings.HasPrefix(d.CodeDir, filepath.Join(m.cfg.Dir, "code")+string(filepath.Separator)) {
		_ = os.RemoveAll(d.CodeDir)
	}
	m.logs.remove(d.key())
	return nil
}

// UnknownError is a token naming no registered function.
type UnknownError struct {
	Name       string
	Registered []string
}

func (e *UnknownError) Error() string {
	if len(e.Registered) == 0 {
		return fmt.Sprintf("function %q is not registered, and no function is; create it with `cairn function create %s ...`",
			e.Name, e.Name)
	}
	return fmt.Sprintf("function %q is not registered; registered functions: %s", e.Name, strings.Join(e.Registered, ", "))
}

// Resolve returns the function a token (Lambda ARN, Function Compute token, FunctionGraph
// URN or bare name) names: an *InvalidError for a malformed token, an *UnknownError listing
// the registered functions for an unknown name.
func (m *Manager) Resolve(ctx context.Context, token string) (Definition, error) {
	name, err := ParseName(token)
	if err != nil {
		return Definition{}, &InvalidError{Msg: err.Error()}
	}
	d, err := m.Get(ctx, name)
	if errors.Is(err, ErrNotFound) {
		all, lerr := m.List(ctx)
		if lerr != nil {
			return Definition{}, lerr
		}
		ue := &UnknownError{Name: name}
		for _, f := range all {
			ue.Registered = append(ue.Registered, f.Name)
		}
		return Definition{}, ue
	}
	return d, err
}

// Invoke runs the function synchronously and returns its result (RequestResponse). The error
// reports that no invocation happened (no such function, a bad payload, ctx ended, closed);
// a failed invocation is Result.Error.
func (m *Manager) Invoke(ctx context.Context, name string, payload []byte) (Result, error) {
	p, inv, err := m.prepare(ctx, name, payload)
	if err != nil {
		return Result{}, err
	}
	return p.invoke(ctx, inv)
}

// InvokeAsync queues an invocation (Lambda's Event type) and returns its request id once it
// is accepted; done, when not nil, gets the result when the invocation has ended.
func (m *Manager) InvokeAsync(ctx context.Context, name string, payload []byte, done func(Result)) (string, error) {
	p, inv, err := m.prepare(ctx, name, payload)
	if err != nil {
		return "", err
	}
	m.mu.Lock()
	if m.queued >= maxQueued {
		m.mu.Unlock()
		return "", fmt.Errorf("cannot queue an invocation of %s: %d invocations are queued already", name, maxQueued)
	}
	m.queued++
	m.async.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.async.Done()
		r, err := p.invoke(m.ctx, inv)
		m.mu.Lock()
		m.queued--
		m.mu.Unlock()
		if err != nil {
			fe := &FuncError{Type: "Cairn.Stopped", Message: "the invocation did not complete: " + err.Error()}
			r = Result{RequestID: inv.id, Payload: marshalError(fe), Error: fe}
		}
		if done != nil {
			done(r)
		}
	}()
	return inv.id, nil
}

func (m *Manager) prepare(ctx context.Context, name string, payload []byte) (*pool, *invocation, error) {
	if len(payload) == 0 {
		payload = []byte("{}")
	}
	if len(payload) > MaxPayloadBytes {
		return nil, nil, invalidf("the payload is %d bytes; the limit is %d", len(payload), MaxPayloadBytes)
	}
	if !json.Valid(payload) {
		return nil, nil, invalidf("the payload is not valid JSON")
	}
	d, err := m.Get(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	if d, err = m.localCode(ctx, d); err != nil {
		return nil, nil, err
	}
	p, err := m.pool(d)
	if err != nil {
		return nil, nil, err
	}
	return p, newInvocation(payload, d.ARN(m.cfg.Region, m.cfg.AccountID)), nil
}

// pool returns d's pool, replacing one made for an older definition of the same name.
func (m *Manager) pool(d Definition) (*pool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	p := m.pools[d.key()]
	if p != nil && p.def.same(d) {
		return p, nil
	}
	if p != nil {
		go p.close()
	}
	p = newPool(m, d)
	m.pools[d.key()] = p
	return p, nil
}

// Logs returns the captured logs of a function, of one request when requestID is set, the
// last limit entries when limit > 0.
func (m *Manager) Logs(ctx context.Context, name, requestID string, limit int) ([]LogEntry, error) {
	d, err := m.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	return m.logs.read(d.key(), requestID, limit)
}

// Close kills every process and fails the invocations in progress. It does not close the
// Store.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	pools := m.pools
	m.pools = map[string]*pool{}
	m.mu.Unlock()
	m.cancel()
	var wg sync.WaitGroup
	for _, p := range pools {
		wg.Go(p.close)
	}
	wg.Wait()
	done := make(chan struct{})
	go func() { m.async.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
	return nil
}

// localCode makes sure d's code is unpacked on this replica. A function created through
// another replica sharing the database has its code directory on that replica's disk: its
// zip, kept in the store, is unpacked here under the same directory name, once.
func (m *Manager) localCode(ctx context.Context, d Definition) (Definition, error) {
	if d.Kind == KindURL || d.CodeDir == "" {
		return d, nil
	}
	if _, err := os.Stat(d.CodeDir); err == nil {
		return d, nil
	}
	local := filepath.Join(m.cfg.Dir, "code", filepath.Base(d.CodeDir))
	if _, err := os.Stat(local); err == nil {
		d.CodeDir = local
		return d, nil
	}
	code, err := m.store.FunctionCode(ctx, d.Tenant, d.Name)
	if err != nil {
		return d, err
	}
	if len(code) == 0 {
		return d, fmt.Errorf("function %s: its code is on another replica's disk and the store has no copy of it "+
			"(it was created before cairn kept one): update the function to store its code", d.Name)
	}
	tmp := local + ".unpack-" + newRequestID()[:8]
	if err := unzip(code, tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return d, err
	}
	if err := os.Rename(tmp, local); err != nil {
		_ = os.RemoveAll(tmp)
		if _, serr := os.Stat(local); serr != nil { // not another invocation's unpacking first
			return d, fmt.Errorf("cannot unpack the code of function %s: %w", d.Name, err)
		}
	}
	d.CodeDir = local
	return d, nil
}
