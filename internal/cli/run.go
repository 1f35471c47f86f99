package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/app"
)

// StartFunc starts cairn in-process; app.Start in production.
type StartFunc func(ctx context.Context, cfg app.Config) (*app.App, error)

// Env is what the CLI may touch of the process. Nil Stdout and Stderr discard, nil Getenv
// sees an empty environment, nil Stdin reads nothing, and nil Start makes the in-process mode
// (no --server) an error.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Environ        func() []string // for TF_VAR_*; nil sees none
	Start          StartFunc
	// Interrupt, when set, delivers the first Ctrl-C, SIGTERM or SIGHUP to a command that can
	// stop gracefully (a deploy cancels its operation); main cancels the context on the second.
	Interrupt *Interrupt
	// IsTerminal reports whether f (Stdout, for colours; Stdin and Stdout, to ask before
	// acting) is a terminal; nil checks the file descriptor of an *os.File (anything else is
	// not a terminal).
	IsTerminal func(f any) bool
}

// Exit codes.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// usageError is a mistake in the command line: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// exitError ends the command with code, after msg (when not empty) on stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// Run runs the cairn command line with args (without the program name) and returns the exit
// code: 0 ok, 1 failure, 2 usage error, 130 interrupted (ctx ended).
func Run(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if env.Stdout == nil {
		env.Stdout = io.Discard
	}
	if env.Stderr == nil {
		env.Stderr = io.Discard
	}
	if env.IsTerminal == nil {
		env.IsTerminal = isTerminal
	}
	if env.Stdin == nil {
		env.Stdin = eofReader{}
	}
	r := &runner{env: env}
	root := r.rootCommand()
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	return r.report(root.ExecuteContext(ctx))
}

// Interrupt routes Ctrl-C, SIGTERM and SIGHUP alike: to the handler a command installed, else
// to the fallback (main's context cancel). It is safe for concurrent use.
type Interrupt struct {
	mu       sync.Mutex
	handler  func(sig os.Signal)
	fallback func()
}

// NewInterrupt returns an Interrupt that calls fallback when no handler is installed.
func NewInterrupt(fallback func()) *Interrupt { return &Interrupt{fallback: fallback} }

// Signal delivers one Ctrl-C (os.Interrupt); see Receive.
func (i *Interrupt) Signal() { i.Receive(os.Interrupt) }

// Receive delivers one interrupting signal (SIGINT, SIGTERM or SIGHUP: a CI runner's stop and a
// closed terminal must leave a stack as Ctrl-C does): to the installed handler, which is then
// removed (the next one goes to the fallback), or to the fallback.
func (i *Interrupt) Receive(sig os.Signal) {
	i.mu.Lock()
	h := i.handler
	i.handler = nil
	i.mu.Unlock()
	if h != nil {
		h(sig)
		return
	}
	i.fallback()
}

// handle installs h for the next interrupt and returns a function that removes it.
func (i *Interrupt) handle(h func(sig os.Signal)) (remove func()) {
	if i == nil {
		return func() {}
	}
	i.mu.Lock()
	i.handler = h
	i.mu.Unlock()
	return func() {
		i.mu.Lock()
		i.handler = nil
		i.mu.Unlock()
	}
}

// received is how the first interrupt is announced, with what a second one does.
func received(sig os.Signal) string {
	if sig == os.Interrupt {
		return "Interrupt received: %s (Ctrl-C again to stop waiting)..."
	}
	name := sig.String()
	if s, ok := sig.(syscall.Signal); ok {
		name = signalNames[s]
	}
	return name + " received: %s (a second signal or Ctrl-C stops waiting)..."
}

var signalNames = map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT"}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// report prints err and maps it to an exit code.
func (r *runner) report(err error) int {
	if err == nil {
		return exitOK
	}
	err = r.explain(err)
	stderr := r.env.Stderr
	var ue *usageError
	var ee *exitError
	var ae *api.Error
	switch {
	case errors.As(err, &ee):
		if ee.msg != "" {
			fmt.Fprintln(stderr, ee.msg)
		}
		return ee.code
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "interrupted")
		return exitInterrupted
	case errors.As(err, &ue) || !r.ran:
		fmt.Fprintf(stderr, "error: %s\nRun 'cairn --help' for usage.\n", err)
		return exitUsage
	case errors.As(err, &ae):
		fmt.Fprintf(stderr, "error: %s\n", ae.Message)
		for _, d := range ae.Diagnostics {
			fmt.Fprintln(stderr, formatDiagnostic(d))
		}
		return exitFailed
	default:
		fmt.Fprintf(stderr, "error: %s\n", err)
		return exitFailed
	}
}
