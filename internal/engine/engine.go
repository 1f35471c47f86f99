// Package engine runs operations on stacks: Validate, Preview, Deploy (create or update, with
// rollback) and Delete, writing a journal entry before and after every provider call so that
// an operation interrupted by a crash resumes where it stopped. It emits CloudFormation-style
// events. It imports template, dag, provider and state, never server or cli.
package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/tenant"
)

// Options configure an Engine. Zero values are documented per field.
type Options struct {
	Store     state.Store
	Providers *provider.Registry
	// Plugins serves the Terraform language's providers; nil refuses such templates.
	Plugins Plugins
	// Region and AccountID fill AWS::Region / ALIYUN::Region and friends; defaults
	// "us-east-1" and "123456789012".
	Region    string
	AccountID string
	// Parallelism bounds concurrent provider calls per operation; default 64.
	Parallelism int
	// Owner names this engine instance in operation leases; default HOST:PID:RANDOM.
	Owner string
	// OwnerAlive reports whether the engine named by a lease may still run; an operation
	// whose holder is not alive is taken over at once instead of after its lease. Default:
	// false only for an owner of this host whose process is gone.
	OwnerAlive func(owner string) bool
	// MaxResumes is how many times in a row an operation may be resumed and die again
	// without progress before it is failed instead (the crash-loop breaker); default 3.
	MaxResumes int
	// LeaseTTL is how long an operation's lease lasts without renewal; another engine resumes
	// an operation whose lease expired. Default 10 s.
	LeaseTTL time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Observer receives the durations of steps and operations; nil: none.
	Observer Observer
	// ScanEvery is how often the engine looks for running operations whose engine is gone
	// (another replica died, or drained) and takes them over; default LeaseTTL/2. Negative:
	// only at Resume.
	ScanEvery time.Duration
	// Limits bound every parse and evaluation of a template (see internal/budget): each
	// request's, and each run's without its wall time. Zero fields take budget.Defaults.
	Limits budget.Limits
	// RunCode reports whether a tenant may run commands on the server: local-exec
	// provisioners, as functions with code (see app.Config.AllowTenantCode). Nil: every
	// tenant may.
	RunCode func(ctx context.Context) bool
	// ClientDirs says the clients are on this machine, as this server's user: the CLI's own
	// in-process server. A request's WorkDir (the configuration's directory on the client) is
	// then where providers and provisioners run, as terraform runs them in its working
	// directory. False: each run gets a directory of its own holding the configuration's
	// files (a path a client sends may exist here by coincidence and be unrelated).
	ClientDirs bool
	// RunsDir holds the runs' own directories (those not the client's, see ClientDirs), each
	// process's in a directory of its own: give it a private directory beside the state
	// database, so that the files a client sent (its *.tfvars) are neither readable by other
	// users nor left in /tmp by a crash. New makes it (mode 0700) and removes what processes of
	// this host that are gone left there. Empty: the system's temporary directory.
	RunsDir string
}

// ValidationError carries the diagnostics that stopped a request.
type ValidationError struct{ Diagnostics diag.Diagnostics }

func (e *ValidationError) Error() string { return e.Diagnostics.Err().Error() }

// ErrNotFound is returned (wrapped) when a stack or operation does not exist; it is
// state.ErrNotFound so callers need to know only one.
var ErrNotFound = state.ErrNotFound

// errCancelled is the cause of a run cancelled by Cancel.
var errCancelled = errors.New("operation cancelled by the user")

// cancelled reports whether ctx ended because the user cancelled the operation.
func cancelled(ctx context.Context) bool { return errors.Is(context.Cause(ctx), errCancelled) }

// Cancel asks the running operation of stack to stop: provider calls in flight are told to
// stop, nothing new starts, and the operation ends as failed (a CloudFormation-dialect stack
// then rolls back, as CancelUpdateStack does). It returns the operation.
func (e *Engine) Cancel(ctx context.Context, stack string) (api.Operation, error) {
	st, err := e.store.GetStack(ctx, stackKey(ctx, stack))
	if err != nil {
		return api.Operation{}, fmt.Errorf("cannot find stack %s: %w", stack, err)
	}
	if st.Operation == "" {
		return api.Operation{}, &NoOperationError{Stack: stack, Status: st.Status}
	}
	id := st.Operation
	e.mu.Lock()
	cancel := e.cancels[id]
	e.mu.Unlock()
	if cancel != nil {
		cancel(errCancelled)
		return e.Operation(ctx, id)
	}
	op, err := e.store.GetOperation(ctx, id)
	if err != nil {
		return api.Operation{}, fmt.Errorf("cannot get operation %s: %w", id, err)
	}
	if op.Status != state.Running {
		return e.apiOperation(ctx, op), nil
	}
	if op.Owner != e.o.Owner && e.now().Before(op.LeaseExpires) && e.o.OwnerAlive(op.Owner) {
		// Another live engine runs it (another server, an in-process CLI): it must be
		// cancelled there, and saying "cancelled" here would be a lie.
		_, name := state.SplitStackKey(op.Stack)
		return api.Operation{}, &state.BusyError{Stack: name, Owner: op.Owner, Operation: op.ID, Kind: op.Kind, Since: op.StartedAt}
	}
	// Being resumed here, or run by nobody (its server died): run it cancelled from the start,
	// so that it ends as a cancelled operation does.
	// Its run may have registered its cancel since it was looked up above: execute reads
	// pending under the same lock, so either it sees pending or this sees its cancel.
	e.mu.Lock()
	e.pending[id] = true
	cancel = e.cancels[id]
	_, here := e.running[id]
	e.mu.Unlock()
	if cancel != nil {
		cancel(errCancelled)
	} else if !here {
		e.goRun(op, true, nil)
	}
	return e.Operation(ctx, id)
}

// errLeaseLost ends an operation whose lease another engine took over: that engine ends it.
var errLeaseLost = errors.New("another server took the operation over")

// track registers the operation id, which a request runs itself (a cairn import, a state
// push) rather than goRun, as running here, before it starts: Cancel then cancels the
// returned context instead of resuming the operation as a dead server's, Wait waits for it,
// Resume leaves it alone, and its lease is renewed while it lasts (a lost lease cancels the
// context with errLeaseLost). untrack ends all that once the operation is finished.
func (e *Engine) track(ctx context.Context, id string) (_ context.Context, untrack func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	renew, stopRenew := context.WithCancel(ctx)
	done := make(chan struct{})
	e.mu.Lock()
	e.running[id], e.cancels[id] = done, cancel
	e.mu.Unlock()
	go e.renewLease(renew, func() { cancel(errLeaseLost) }, id)
	return ctx, func() {
		stopRenew()
		e.mu.Lock()
		delete(e.running, id)
		delete(e.cancels, id)
		delete(e.pending, id)
		e.mu.Unlock()
		cancel(nil)
		close(done)
	}
}

// finishOp ends operation id with status and reason, and wakes the long polls.
func (e *Engine) finishOp(ctx context.Context, id, status, reason string) error {
	if err := e.store.FinishOperation(ctx, id, status, reason, e.now()); err != nil {
		return fmt.Errorf("cannot finish operation %s: %w", id, err)
	}
	e.wake()
	return nil
}

// errShutdown ends a run whose engine is shutting down; the operation stays running in the
// store and is resumed later.
var errShutdown = errors.New("engine is shutting down")

// Engine runs operations. It is safe for concurrent use.
type Engine struct {
	o      Options
	store  state.Store
	reg    *provider.Registry
	runCtx context.Context // cancelled by Shutdown
	stop   context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	notify  chan struct{}            // closed and replaced at every event
	running map[string]chan struct{} // operation id -> closed when its run returns here
	cancels map[string]context.CancelCauseFunc
	pending map[string]bool // operations cancelled before their run here started
	// abandons stop a run here for good, as a lost lease does: nothing more is written and
	// nothing is rolled back (ForceUnlock).
	abandons map[string]context.CancelFunc
	scanOnce sync.Once
}

// New returns an engine over o.Store and o.Providers.
func New(o Options) (*Engine, error) {
	if o.Store == nil || o.Providers == nil {
		return nil, errors.New("engine: Store and Providers are required")
	}
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.AccountID == "" {
		o.AccountID = "123456789012"
	}
	if o.Parallelism <= 0 {
		o.Parallelism = 64
	}
	if o.Owner == "" {
		o.Owner = defaultOwner()
	}
	if o.OwnerAlive == nil {
		o.OwnerAlive = ownerAlive
	}
	if o.MaxResumes <= 0 {
		o.MaxResumes = 3
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 10 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Observer == nil {
		o.Observer = noObserver{}
	}
	if o.ScanEvery == 0 {
		o.ScanEvery = o.LeaseTTL / 2
	}
	if o.RunsDir != "" {
		if err := prepareRunsDir(o.RunsDir); err != nil {
			return nil, err
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Engine{o: o, store: o.Store, reg: o.Providers, runCtx: ctx, stop: stop,
		notify: make(chan struct{}), running: map[string]chan struct{}{},
		cancels: map[string]context.CancelCauseFunc{}, pending: map[string]bool{}, abandons: map[string]context.CancelFunc{}}, nil
}

func (e *Engine) now() time.Time { return e.o.Now().UTC() }

// Notify returns a channel that is closed at the next event of any stack, for long polls.
func (e *Engine) Notify() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.notify
}

// Wake wakes the long polls, as a new event does: another replica wrote one.
func (e *Engine) Wake() { e.wake() }

func (e *Engine) wake() {
	e.mu.Lock()
	close(e.notify)
	e.notify = make(chan struct{})
	e.mu.Unlock()
}

// Operation returns an operation by id.
func (e *Engine) Operation(ctx context.Context, id string) (api.Operation, error) {
	op, stackStatus, err := e.watchOperation(ctx, id)
	if err != nil {
		return api.Operation{}, fmt.Errorf("cannot get operation %s: %w", id, err)
	}
	return watched(op, stackStatus), nil
}

// watchOperation reads operation id, when the calling tenant owns it, and its stack's status,
// without the request or the stack's template: a CLI following a deploy asks for it after
// every batch of events, and those two grow with the stack.
func (e *Engine) watchOperation(ctx context.Context, id string) (state.Operation, string, error) {
	op, stackStatus, err := e.store.WatchOperation(ctx, id)
	if err != nil {
		return state.Operation{}, "", err
	}
	if t, _ := state.SplitStackKey(op.Stack); t != tenant.From(ctx) {
		return state.Operation{}, "", state.ErrNotFound
	}
	return op, stackStatus, nil
}

func watched(op state.Operation, stackStatus string) api.Operation {
	_, name := state.SplitStackKey(op.Stack)
	return api.Operation{ID: op.ID, Stack: name, Kind: op.Kind, Status: op.Status, StatusReason: op.StatusReason,
		StartedAt: op.StartedAt, EndedAt: op.EndedAt, StackStatus: stackStatus}
}

func (e *Engine) apiOperation(ctx context.Context, op state.Operation) api.Operation {
	_, name := state.SplitStackKey(op.Stack)
	out := api.Operation{ID: op.ID, Stack: name, Kind: op.Kind, Status: op.Status,
		StatusReason: op.StatusReason, StartedAt: op.StartedAt, EndedAt: op.EndedAt}
	if st, err := e.store.GetStack(ctx, op.Stack); err == nil {
		out.StackStatus = st.Status
	}
	return out
}

// Wait blocks until operation id has finished or ctx is done, and returns it as it is then.
func (e *Engine) Wait(ctx context.Context, id string) (api.Operation, error) {
	for {
		e.mu.Lock()
		done := e.running[id]
		e.mu.Unlock()
		op, stackStatus, err := e.watchOperation(ctx, id)
		if err != nil {
			return api.Operation{}, fmt.Errorf("cannot get operation %s: %w", id, err)
		}
		if op.Status != state.Running {
			return watched(op, stackStatus), nil
		}
		if done == nil { // run by another engine, or not resumed yet: poll
			done = make(chan struct{})
			time.AfterFunc(time.Second, func() { close(done) })
		}
		select {
		case <-ctx.Done():
			return watched(op, stackStatus), nil
		case <-done:
		}
	}
}

// Shutdown stops starting provider calls and waits (until ctx is done) for the runs to return;
// unfinished operations stay running in the store and Resume continues them.
func (e *Engine) Shutdown(ctx context.Context) error {
	e.stop()
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
		if e.o.RunsDir != "" {
			_ = os.Remove(processRunsDir(e.o.RunsDir)) // empty once every run has ended
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("cannot stop every operation in time: %w", ctx.Err())
	}
}

// Resume continues, in the background, every operation left running by an engine that stopped
// (a crash, a kill, a shutdown). An operation whose lease another live engine still renews is
// left to it; Resume keeps trying such operations until their lease expires or they finish.
func (e *Engine) Resume(ctx context.Context) error {
	ops, err := e.store.ListRunningOperations(ctx)
	if err != nil {
		return fmt.Errorf("cannot list running operations: %w", err)
	}
	for _, op := range ops {
		e.goRun(op, true, nil)
	}
	if e.o.ScanEvery > 0 {
		e.scanOnce.Do(func() { go e.scan() })
	}
	return nil
}

// scan takes over, every ScanEvery until the engine stops, the running operations whose
// engine is gone: another replica that died (its lease expired, or its process is gone) or
// drained (it let its lease expire at once).
func (e *Engine) scan() {
	t := time.NewTicker(e.o.ScanEvery)
	defer t.Stop()
	for {
		select {
		case <-e.runCtx.Done():
			return
		case <-t.C:
		}
		ops, err := e.store.ListRunningOperations(e.runCtx)
		if err != nil {
			continue // the database is away (restarting): the next tick tries again
		}
		for _, op := range ops {
			if op.Owner != e.o.Owner && e.now().Before(op.LeaseExpires) && e.o.OwnerAlive(op.Owner) {
				continue // another live engine runs it
			}
			e.goRun(op, true, nil) // a no-op for an operation running here
		}
	}
}

// goRun runs op in the background; claim says the lease must be claimed first (resumption).
// ho, when not nil, is the template and providers the request already loaded.
func (e *Engine) goRun(op state.Operation, claim bool, ho *handoff) {
	e.mu.Lock()
	if _, ok := e.running[op.ID]; ok {
		e.mu.Unlock()
		ho.close()
		return
	}
	done := make(chan struct{})
	e.running[op.ID] = done
	e.mu.Unlock()
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer func() {
			e.mu.Lock()
			delete(e.running, op.ID)
			delete(e.pending, op.ID)
			e.mu.Unlock()
			close(done)
		}()
		if claim && !e.claim(op.ID) {
			ho.close()
			return
		}
		if claim {
			if broken, err := e.breakCrashLoop(e.runCtx, op); broken || err != nil {
				return // failed as a crash loop, or the store is gone: resumed at the next start
			}
		}
		e.execute(op, ho)
		e.observeOperation(op.ID)
	}()
}

// claim takes the lease of a running operation, waiting for a live holder's lease to expire.
func (e *Engine) claim(id string) bool {
	for {
		err := e.store.ClaimOperation(e.runCtx, id, e.o.Owner, e.now().Add(e.o.LeaseTTL))
		if err == nil {
			return true
		}
		var busy *state.BusyError
		if !errors.As(err, &busy) {
			return false // finished meanwhile, or the store is gone
		}
		if !e.o.OwnerAlive(busy.Owner) {
			// The holder is gone (the CLI process that was killed): no need to wait out its lease.
			err := e.store.TakeOverOperation(e.runCtx, id, busy.Owner, e.o.Owner, e.now().Add(e.o.LeaseTTL))
			if err == nil {
				return true
			}
			if !errors.As(err, &busy) {
				return false
			}
		}
		select {
		case <-e.runCtx.Done():
			return false
		case <-time.After(e.o.LeaseTTL / 4):
		}
		if op, err := e.store.GetOperation(e.runCtx, id); err != nil || op.Status != state.Running {
			return false
		}
	}
}

// newID returns a random UUID (version 4).
func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
