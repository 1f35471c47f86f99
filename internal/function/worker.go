package function

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// invocation is one event on its way through a worker. finish delivers the first result.
type invocation struct {
	id              string
	payload         []byte
	arn             string
	traceID         string
	clientContext   string
	cognitoIdentity string
	deadline        time.Time // set when a worker takes it
	eventID         string    // a custom-resource event's RequestId, "" for other payloads
	done            chan Result
	once            sync.Once
}

func newInvocation(payload []byte, arn string) *invocation {
	return &invocation{id: newRequestID(), payload: payload, arn: arn, eventID: customResourceRequestID(payload),
		traceID: newTraceID(time.Now().Unix()), done: make(chan Result, 1)}
}

// customResourceRequestID is the RequestId of a CloudFormation/ROS custom-resource event
// (one with RequestType, ResponseURL and RequestId), "" for any other payload. Logs are tagged
// with it as well as with the invocation's own request id, so that the RequestId shown in a
// stack's events finds the invocation that handled it.
func customResourceRequestID(payload []byte) string {
	var ev struct {
		RequestType, ResponseURL string
		RequestID                string `json:"RequestId"`
	}
	if json.Unmarshal(payload, &ev) != nil || ev.RequestType == "" || ev.ResponseURL == "" {
		return ""
	}
	return ev.RequestID
}

// forEvent is what a START line adds for a custom-resource event: the RequestId it carries.
func (inv *invocation) forEvent() string {
	if inv.eventID == "" {
		return ""
	}
	return " CustomResourceRequestId: " + inv.eventID
}

// entry is a log entry about inv.
func (inv *invocation) entry(stream, msg string) LogEntry {
	return LogEntry{RequestID: inv.id, EventRequestID: inv.eventID, Stream: stream, Message: msg}
}

func (inv *invocation) finish(r Result) { inv.once.Do(func() { inv.done <- r }) }

// tailLines is how many of a process's last output lines a crash report quotes.
const tailLines = 5

// worker is one process of a function and the Runtime API listener it talks to.
type worker struct {
	p      *pool
	stream string // log stream name, AWS_LAMBDA_LOG_STREAM_NAME
	cmd    *exec.Cmd
	srv    *http.Server
	next   chan *invocation // handed to the process's GET /next
	stop   chan struct{}    // closed when the worker is being killed
	exited chan struct{}    // closed once the process has exited
	out    []*outputPipe    // stdout and stderr

	mu       sync.Mutex
	cur      *invocation // between /next and /response or /error
	last     *invocation // the request output lines are attributed to (nil: none yet)
	tail     []string
	initErr  *FuncError
	exitErr  error
	served   int // invocations handed over
	stopOnce sync.Once
}

// startWorker starts a process for p's function with its own Runtime API listener. What the
// process prints while it initialises is logged under the request id it is started for, so
// that `cairn function logs --request-id` shows an init failure with the invocation it failed.
func startWorker(p *pool, inv *invocation) (*worker, error) {
	d := p.def
	name, args, err := p.m.command(d)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("cannot listen for the Runtime API: %w", err)
	}
	now := time.Now().UTC()
	w := &worker{p: p, next: make(chan *invocation), stop: make(chan struct{}), exited: make(chan struct{}), last: inv,
		stream: fmt.Sprintf("%s/[$LATEST]%s", now.Format("2006/01/02"), newRequestID()[:8]+newRequestID()[:8])}
	w.srv = &http.Server{Handler: w.runtimeAPI(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = w.srv.Serve(ln) }()

	cmd := exec.Command(name, args...)
	cmd.Dir = d.CodeDir
	cmd.Env = p.m.environ(d, ln.Addr().String(), w.stream)
	// The worker owns the output pipes (not exec's copying goroutines) so that it can drain
	// them when the process asks for its next invocation.
	var ends []*os.File
	for _, stream := range []string{"stdout", "stderr"} {
		out, end, err := newOutputPipe(&lineWriter{stream: stream, emit: w.emit})
		if err != nil {
			closeAll(ends, w.out, w.srv)
			return nil, fmt.Errorf("cannot create the output pipes: %w", err)
		}
		w.out, ends = append(w.out, out), append(ends, end)
	}
	cmd.Stdout, cmd.Stderr = ends[0], ends[1]
	// Its own process group, so a kill reaches what the bootstrap started; killed with cairn.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	for _, end := range ends {
		_ = end.Close() // the process has its copies; end of file comes when they close
	}
	if err != nil {
		closeAll(nil, w.out, w.srv)
		return nil, fmt.Errorf("cannot start %s: %w", filepath.Base(name), withoutPath(err))
	}
	w.cmd = cmd
	for _, out := range w.out {
		go out.run()
	}
	if d.Kind == KindProvided {
		limitMemory(cmd.Process.Pid, d.MemoryMB)
	}
	go w.wait()
	return w, nil
}

// closeAll releases what startWorker made before it failed.
func closeAll(ends []*os.File, outs []*outputPipe, srv *http.Server) {
	for _, f := range ends {
		_ = f.Close()
	}
	for _, out := range outs {
		_ = out.r.Close()
	}
	_ = srv.Close()
}

// limitMemory caps the process's data segment (RLIMIT_DATA: heap and other private writable
// memory, not address-space reservations, so Go and V8 runtimes start normally). Best effort:
// the child may have allocated before the limit applies, and its children inherit it.
func limitMemory(pid, mb int) {
	lim := uint64(mb) << 20
	_ = unix.Prlimit(pid, unix.RLIMIT_DATA, &unix.Rlimit{Cur: lim, Max: lim}, nil)
}

func (w *worker) wait() {
	err := w.cmd.Wait()
	for _, out := range w.out {
		out.finish(time.Second) // a grandchild holding the pipes open must not stall the worker
	}
	w.mu.Lock()
	w.exitErr = err
	w.mu.Unlock()
	close(w.exited)
	_ = w.srv.Close()
}

// emit records one output line of the process, attributed to the request it last took.
func (w *worker) emit(stream, line string) {
	w.mu.Lock()
	last := w.last
	w.tail = append(w.tail, line)
	if len(w.tail) > tailLines {
		w.tail = w.tail[1:]
	}
	w.mu.Unlock()
	e := LogEntry{Stream: stream, Message: line}
	if last != nil {
		e = last.entry(stream, line)
	}
	w.p.m.logs.write(w.p.def.key(), e)
}

// drainOutput emits what the process has written so far; see outputPipe.
func (w *worker) drainOutput() {
	for _, out := range w.out {
		out.drain()
	}
}

func (w *worker) setCurrent(inv *invocation) (prev *invocation) {
	w.mu.Lock()
	defer w.mu.Unlock()
	prev, w.cur, w.last = w.cur, inv, inv
	return prev
}

// current returns the running invocation if its id is id.
func (w *worker) current(id string) *invocation {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur == nil || w.cur.id != id {
		return nil
	}
	return w.cur
}

func (w *worker) clearCurrent(inv *invocation) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur == inv {
		w.cur = nil
	}
}

func (w *worker) alive() bool {
	select {
	case <-w.exited:
		return false
	default:
		return true
	}
}

// kill ends the process group and waits (briefly) for the process to be reaped.
func (w *worker) kill() {
	w.stopOnce.Do(func() { close(w.stop) })
	if w.cmd != nil && w.cmd.Process != nil {
		_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
	}
	select {
	case <-w.exited:
	case <-time.After(5 * time.Second):
	}
}

// errNotDelivered: the process exited before it took the invocation.
var errNotDelivered = errors.New("the process exited before it took the invocation")

// run hands inv to the process and waits for its outcome, the process's exit, the deadline
// or ctx. It returns errNotDelivered when the process was gone before taking inv, ctx's error
// when ctx ended (the process is then killed), and otherwise the Result; ok reports whether
// the worker can take another invocation.
func (w *worker) run(ctx context.Context, inv *invocation) (_ Result, ok bool, _ error) {
	timeout := w.p.def.Timeout
	inv.deadline = time.Now().Add(timeout)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	start := time.Now()
	select {
	case w.next <- inv:
		w.mu.Lock()
		w.served++
		w.mu.Unlock()
	case <-w.exited:
		return Result{}, false, errNotDelivered
	case <-timer.C:
		w.kill()
		return w.timedOut(inv, timeout, "the process did not ask for an invocation (it is still initialising or hung)"), false, nil
	case <-ctx.Done():
		return Result{}, true, ctx.Err()
	}
	select {
	case r := <-inv.done:
		r.Duration = time.Since(start)
		return r, true, nil
	case <-w.exited:
		// A runtime may post /error and exit at once: prefer what it posted.
		select {
		case r := <-inv.done:
			r.Duration = time.Since(start)
			return r, false, nil
		default:
		}
		r := w.crashed(inv)
		r.Duration = time.Since(start)
		return r, false, nil
	case <-timer.C:
		w.kill()
		return w.timedOut(inv, timeout, ""), false, nil
	case <-ctx.Done():
		w.kill()
		return Result{}, false, ctx.Err()
	}
}

func (w *worker) timedOut(inv *invocation, timeout time.Duration, why string) Result {
	msg := fmt.Sprintf("RequestId: %s Error: Task timed out after %.2f seconds", inv.id, timeout.Seconds())
	if why != "" {
		msg += ": " + why
	}
	fe := &FuncError{Type: "Sandbox.Timedout", Message: msg}
	return Result{RequestID: inv.id, Payload: marshalError(fe), Error: fe, Duration: timeout}
}

// crashed is the result of an invocation whose process exited without answering: the init
// error the runtime reported, or the exit status and the last lines of output.
func (w *worker) crashed(inv *invocation) Result {
	w.mu.Lock()
	initErr, exitErr, tail := w.initErr, w.exitErr, strings.Join(w.tail, " | ")
	w.mu.Unlock()
	fe := &FuncError{Type: "Runtime.ExitError", Message: fmt.Sprintf("RequestId: %s Error: Runtime exited with error: %s",
		inv.id, exitDescription(exitErr))}
	if initErr != nil {
		fe = &FuncError{Type: initErr.Type, Message: initErr.Message, StackTrace: initErr.StackTrace}
	} else if tail != "" {
		fe.Message += "; last output: " + tail
	}
	return Result{RequestID: inv.id, Payload: marshalError(fe), Error: fe}
}

func exitDescription(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "signal: " + ws.Signal().String()
		}
		return "exit status " + strconv.Itoa(ee.ExitCode())
	}
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// withoutPath drops the data directory from a start error: "fork/exec /x/bootstrap: ..." ->
// "...".
func withoutPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
