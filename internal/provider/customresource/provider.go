package customresource

import (
	"crypto/rand"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/internal/egress"
	"github.com/cairn-dev/cairn/internal/provider"
)

// Config configures a Provider. Store and ResponseURL are required.
type Config struct {
	Store Store
	// Key signs ResponseURLs (HMAC-SHA256). The caller persists it so that URLs handed out
	// before a restart stay valid; when empty, New generates a random key for this process.
	Key []byte
	// ResponseURL is the base URL handlers reach cairn at, e.g. "https://localhost". A
	// request's ResponseURL is base + "/v1/responses/" + RequestId +
	// "?expires=<unix>&signature=<hex>".
	ResponseURL string
	// Client delivers requests to http(s) and web: tokens. Default: a client with dial, TLS
	// and idle timeouts that dials and redirects only as Policy allows; each delivery is
	// bounded by its own context deadline. A Client given here is used as it is (give it
	// Policy's DialContext and CheckRedirect).
	Client *http.Client
	// Policy says which hosts http(s) and web: tokens may reach (`cairn server
	// --service-token-allow`); nil allows every host. Check refuses what it can tell from the
	// URL; the default Client refuses the rest when it dials.
	Policy *egress.Policy
	Now    func() time.Time // default time.Now
	// Functions resolves function tokens (Lambda ARNs, Function Compute tokens, FunctionGraph
	// URNs); nil: such tokens are refused.
	Functions Invoker
	// WaitNotice is how long a request may go unanswered before the call reports, once, what
	// it waits for and where (a progress event on the resource); default one minute. A handler
	// that cannot reach or trust the ResponseURL is then visible long before ServiceTimeout.
	// It is also how long the Delete of a cancelled Create waits for that Create's late answer
	// (late.go).
	WaitNotice time.Duration
	// Logger may be nil. Nothing logged holds a ResponseURL's query, a request body or a
	// secret value.
	Logger *slog.Logger
}

// Provider serves custom resources; see the package documentation.
type Provider struct {
	provider.Unimplemented

	store     Store
	functions Invoker
	key       []byte
	base      string
	client    *http.Client
	policy    *egress.Policy
	now       func() time.Time
	log       *slog.Logger

	// Tunables, fixed after New; tests shorten them.
	poll       time.Duration // first store re-check interval while waiting (doubles up to maxPoll)
	maxPoll    time.Duration
	backoff    time.Duration // first delay between delivery retries (doubles)
	sendWithin time.Duration // bound on an async delivery (POST until its answer)
	waitNotice time.Duration // unanswered this long: say what is awaited and where

	mu      sync.Mutex
	waiters map[string]map[chan notice]struct{} // request id -> waiting calls
	closed  chan struct{}
	once    sync.Once
}

var _ provider.Provider = (*Provider)(nil)

// notice tells a waiting call that its request was answered (body, already stored) or that a
// response for it was rejected in a way that fails the call (reject), or, with note, why it is
// still waiting (reported as progress; the wait goes on).
type notice struct {
	body    []byte
	reject  *rejection
	note    string
	recheck bool // a response may be in the Store: read it now
}

// New returns a Provider for cfg.
func New(cfg Config) *Provider {
	p := &Provider{
		store:      cfg.Store,
		functions:  cfg.Functions,
		key:        cfg.Key,
		base:       strings.TrimRight(cfg.ResponseURL, "/"),
		client:     cfg.Client,
		policy:     cfg.Policy,
		now:        cfg.Now,
		log:        cfg.Logger,
		poll:       time.Second,
		maxPoll:    15 * time.Second,
		backoff:    time.Second,
		sendWithin: 30 * time.Second,
		waitNotice: cfg.WaitNotice,
		waiters:    map[string]map[chan notice]struct{}{},
		closed:     make(chan struct{}),
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.waitNotice <= 0 {
		p.waitNotice = time.Minute
	}
	if p.log == nil {
		p.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if p.client == nil {
		p.client = defaultClient(cfg.Policy)
	}
	if len(p.key) == 0 {
		p.key = make([]byte, 32)
		_, _ = rand.Read(p.key) // never fails (crypto/rand panics instead)
		p.log.Warn("custom resources: no response URL key configured; URLs will not survive a restart")
	}
	return p
}

// defaultClient dials, and follows redirects, only where policy allows.
func defaultClient(policy *egress.Policy) *http.Client {
	return policy.Client(&http.Transport{
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}, &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second})
}

// Capabilities: custom resources cannot be read back.
func (p *Provider) Capabilities() provider.Capabilities { return provider.Capabilities{Read: false} }

// Close makes every waiting call return an error. It does not close the Store or the Client.
func (p *Provider) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}

// subscribe registers a waiter for request id; call the returned func to unregister.
func (p *Provider) subscribe(id string) (<-chan notice, func()) {
	ch := make(chan notice, 1)
	p.mu.Lock()
	if p.waiters[id] == nil {
		p.waiters[id] = map[chan notice]struct{}{}
	}
	p.waiters[id][ch] = struct{}{}
	p.mu.Unlock()
	return ch, func() {
		p.mu.Lock()
		delete(p.waiters[id], ch)
		if len(p.waiters[id]) == 0 {
			delete(p.waiters, id)
		}
		p.mu.Unlock()
	}
}

// notify wakes the waiters of request id without blocking: a waiter that already has a
// notice pending keeps the first one (a stored response always wins, and it is re-read).
// Recheck tells a wait for request id, if one runs here, to read the Store now rather than at
// its next poll: another process (a replica behind the same load balancer) saved a response.
func (p *Provider) Recheck(id string) { p.notify(id, notice{recheck: true}) }

func (p *Provider) notify(id string, n notice) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for ch := range p.waiters[id] {
		select {
		case ch <- n:
		default:
		}
	}
}
