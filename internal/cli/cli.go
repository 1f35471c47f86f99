// Package cli is the cairn command line: cobra commands that parse flags, call the API
// through internal/client (against --server, or a cairn started in-process), and render the
// answers. It holds no engine logic; views are in view.go.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/app"
	"github.com/cairn-dev/cairn/internal/client"
)

// StartFunc starts cairn in-process; app.Start in production.
type StartFunc func(ctx context.Context, cfg app.Config) (*app.App, error)

// Env is what the CLI may touch of the process.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Start          StartFunc
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

// runner holds the global flags and the environment for every command.
type runner struct {
	env     Env
	server  string
	token   string
	dir     string
	output  string
	verbose bool

	inProcess bool // set by connect
	ran       bool // a command's RunE was entered: errors are no longer usage errors
}

// Run runs the cairn command line with args (without the program name) and returns the exit
// code.
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
	r := &runner{env: env}
	root := r.rootCommand()
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	return r.report(err)
}

// report prints err and maps it to an exit code.
func (r *runner) report(err error) int {
	if err == nil {
		return exitOK
	}
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

func (r *runner) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "cairn",
		Short: "cairn deploys CloudFormation and ROS templates to stacks",
		Long: "cairn deploys CloudFormation and ROS templates to stacks.\n\n" +
			"Commands talk to the server given by --server (or CAIRN_SERVER); without one, they run\n" +
			"cairn in-process on the state in --dir.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err.Error()} })
	pf := root.PersistentFlags()
	pf.StringVar(&r.server, "server", "", "base URL of a cairn server (env CAIRN_SERVER); empty: run cairn in-process")
	pf.StringVar(&r.token, "token", "", "API bearer token (env CAIRN_TOKEN); with server: the token to require")
	pf.StringVar(&r.dir, "dir", "", "state directory (env CAIRN_DIR; default .cairn)")
	pf.StringVarP(&r.output, "output", "o", "text", "output format: text or json")
	pf.BoolVarP(&r.verbose, "verbose", "v", false, "log more to stderr")
	root.AddCommand(r.deployCommand(), r.previewCommand(), r.deleteCommand(), r.stacksCommand(),
		r.describeCommand(), r.eventsCommand(), r.outputsCommand(), r.validateCommand(), r.serverCommand())
	return root
}

// action wraps a command's body: it fills the global flags from the environment, checks
// them, and marks errors from then on as failures rather than usage errors.
func (r *runner) action(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("unexpected argument %q", args[0])
		}
		r.fromEnv(cmd)
		if r.output != "text" && r.output != "json" {
			return usagef("--output must be text or json, not %q", r.output)
		}
		r.ran = true
		return fn(cmd, args)
	}
}

// fromEnv gives flags not set on the command line their environment value or default.
func (r *runner) fromEnv(cmd *cobra.Command) {
	fill := func(flag string, p *string, env, def string) {
		if !cmd.Flags().Changed(flag) {
			if v := r.env.Getenv(env); v != "" {
				*p = v
			}
		}
		if *p == "" {
			*p = def
		}
	}
	fill("server", &r.server, "CAIRN_SERVER", "")
	fill("token", &r.token, "CAIRN_TOKEN", "")
	fill("dir", &r.dir, "CAIRN_DIR", ".cairn")
}

// connect returns a client of --server, or of a cairn started in-process; close stops the
// latter (with a 10 s deadline) and must be called.
func (r *runner) connect(ctx context.Context) (c *client.Client, close func(), err error) {
	if r.server != "" {
		return client.New(r.server, r.token, nil), func() {}, nil
	}
	level := slog.LevelWarn
	if r.verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(r.env.Stderr, &slog.HandlerOptions{Level: level}))
	a, err := r.env.Start(ctx, app.Config{
		Dir:          r.dir,
		Listen:       "127.0.0.1:0",
		PublicURL:    r.env.Getenv("CAIRN_PUBLIC_URL"),
		TLSListen:    r.env.Getenv("CAIRN_TLS_LISTEN"),
		TLSPublicURL: r.env.Getenv("CAIRN_TLS_PUBLIC_URL"),
		Logger:       log,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("cannot start cairn in-process: %w", err)
	}
	r.inProcess = true
	if ca := a.CAFile(); ca != "" && r.output != "json" {
		// Handlers that PUT over HTTPS must trust cairn's own CA; say how, once per run.
		fmt.Fprintf(r.env.Stderr, "cairn: HTTPS uses cairn's own CA: give handlers NODE_EXTRA_CA_CERTS=%s or SSL_CERT_FILE=%s\n", ca, ca)
	}
	close = func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := a.Shutdown(sctx); err != nil {
			fmt.Fprintf(r.env.Stderr, "warning: cannot stop cairn cleanly: %s\n", err)
		}
	}
	return client.New(a.URL(), a.Token(), nil), close, nil
}

// isTerminal reports whether w is a terminal, for colours.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// interrupted is the error when ctx ends while following an operation.
func (r *runner) interrupted() error {
	msg := "interrupted: the operation goes on (on the server)"
	if r.inProcess {
		msg = "interrupted: the operation goes on (in-process: it resumes the next time cairn runs)"
	}
	return &exitError{code: exitInterrupted, msg: msg}
}
