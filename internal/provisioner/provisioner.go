// Package provisioner runs the Terraform language's provisioners from the cairn server as
// terraform 1.11 does: local-exec runs a command here (command, interpreter, working_dir,
// environment, quiet); file uploads files and remote-exec runs scripts on another machine
// over an SSH connection (the connection block; WinRM is refused). It imports only leaves.
package provisioner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
)

// Provisioner types.
const (
	LocalExec  = "local-exec"
	File       = "file"
	RemoteExec = "remote-exec"
)

// Removed lists the provisioners terraform removed in 0.15; it refuses them as removed.
var Removed = []string{"chef", "habitat", "puppet", "salt-masterless"}

// kind is one provisioner type: the decoder of its block, terraform's check of the decoded
// block (nil: none), and how it runs.
type kind struct {
	spec     hcldec.ObjectSpec
	validate func(cty.Value) *Invalid
	run      func(context.Context, Request) error
}

var kinds = map[string]kind{
	LocalExec:  {spec: localExecSpec, run: localExec},
	File:       {spec: fileSpec, validate: validateFile, run: file},
	RemoteExec: {spec: remoteExecSpec, validate: validateRemoteExec, run: remoteExec},
}

// Known reports whether typ is a provisioner type terraform 1.11 has.
func Known(typ string) bool {
	_, ok := kinds[typ]
	return ok
}

var localExecSpec = hcldec.ObjectSpec{
	"command":     &hcldec.AttrSpec{Name: "command", Type: cty.String, Required: true},
	"interpreter": &hcldec.AttrSpec{Name: "interpreter", Type: cty.List(cty.String)},
	"working_dir": &hcldec.AttrSpec{Name: "working_dir", Type: cty.String},
	"environment": &hcldec.AttrSpec{Name: "environment", Type: cty.Map(cty.String)},
	"quiet":       &hcldec.AttrSpec{Name: "quiet", Type: cty.Bool},
}

// Spec is the decoder of a provisioner type's block; false for an unknown type.
func Spec(typ string) (hcldec.Spec, bool) {
	k, ok := kinds[typ]
	if !ok {
		return nil, false
	}
	return k.spec, true
}

// BodySchema is the schema of a provisioner type's block, to check its arguments before
// anything is evaluated.
func BodySchema(typ string) (*hcl.BodySchema, bool) {
	spec, ok := Spec(typ)
	if !ok {
		return nil, false
	}
	return hcldec.ImpliedSchema(spec), true
}

// Invalid is a provisioner block terraform refuses before it runs anything (file with both
// source and content, remote-exec without a script).
type Invalid struct{ Summary, Detail string }

func (e *Invalid) Error() string {
	if e.Detail == "" {
		return e.Summary
	}
	return e.Summary + ": " + e.Detail
}

// Validate checks a decoded block of type typ as terraform's ValidateProvisionerConfig: an
// unknown value counts as set, so it works before the resource exists.
func Validate(typ string, cfg cty.Value) *Invalid {
	k, ok := kinds[typ]
	if !ok || k.validate == nil {
		return nil
	}
	return k.validate(cfg)
}

// Request is one provisioner run.
type Request struct {
	Type string
	// Config is the block decoded with Spec(Type), wholly known and without marks.
	Config cty.Value
	// Connection is the connection block (the resource's merged with the provisioner's)
	// decoded with ConnectionSpec, wholly known and without marks; null when there is none.
	Connection cty.Value
	// Dir is the working directory of a command without working_dir, and what relative
	// paths (a working_dir, a file source, a script) are relative to: terraform's, the
	// directory it runs in.
	Dir string
	// Env is the environment the command's own is added to (a command's `environment`
	// wins); nil: the server's, without CAIRN_* variables.
	Env []string
	// Output receives what the provisioner prints, line by line (stdout and stderr together,
	// as terraform shows them); local-exec's "Executing: ..." line first.
	Output func(line string)
	// Sensitive names the arguments of Config that held sensitive or ephemeral values before
	// their marks were taken off. A failure then repeats none of local-exec's command or
	// output, which may print them (terraform shows both on the terminal; cairn's failures
	// are stored where every reader of the stack sees them).
	Sensitive []string
}

// SensitiveValue stands for a value a message must not repeat.
const SensitiveValue = "(sensitive value)"

// suppressedOutput stands for output that may show a sensitive value, as terraform says it.
const suppressedOutput = "(output suppressed due to sensitive value in config)"

// sensitive reports whether argument name held a sensitive value.
func (req Request) sensitive(name string) bool {
	for _, s := range req.Sensitive {
		if s == name {
			return true
		}
	}
	return false
}

// maxErrOutput is how much of a failed command's output its error repeats, as terraform.
const maxErrOutput = 8 * 1024

// Run runs a provisioner and returns its failure as terraform words it. ctx ending kills the
// command and everything it started, or closes the connection.
func Run(ctx context.Context, req Request) error {
	k, ok := kinds[req.Type]
	if !ok {
		return fmt.Errorf("unknown provisioner %q", req.Type)
	}
	return k.run(ctx, req)
}

func localExec(ctx context.Context, req Request) error {
	out := req.Output
	if out == nil {
		out = func(string) {}
	}
	cfg := req.Config
	command := str(cfg, "command")
	if command == "" {
		return errors.New("Invalid local-exec provisioner command: the command must be a non-empty string")
	}
	var args []string
	if v := attr(cfg, "interpreter"); !v.IsNull() && v.LengthInt() > 0 {
		for _, a := range v.AsValueSlice() {
			if !a.IsNull() {
				args = append(args, a.AsString())
			}
		}
	} else if runtime.GOOS == "windows" {
		args = []string{"cmd", "/C"}
	} else {
		args = []string{"/bin/sh", "-c"}
	}
	args = append(args, command)
	env := req.Env
	if env == nil {
		env = provider.WithoutCairnEnv(os.Environ())
	}
	if v := attr(cfg, "environment"); !v.IsNull() {
		for k, x := range v.AsValueMap() {
			if !x.IsNull() {
				env = append(env, k+"="+x.AsString())
			}
		}
	}
	dir := req.Dir
	if wd := str(cfg, "working_dir"); wd != "" {
		if filepath.IsAbs(wd) || dir == "" {
			dir = wd
		} else {
			dir = filepath.Join(dir, wd)
		}
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("local-exec provisioner error: failed to initialize pipe for output: %w", err)
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr, cmd.Dir, cmd.Env = pw, pw, dir, env
	killGroup(cmd)
	if q := attr(cfg, "quiet"); !q.IsNull() && q.True() {
		out("local-exec: Executing: Suppressed by quiet=true")
	} else {
		out(fmt.Sprintf("Executing: %q", args))
	}
	tail := &ring{max: maxErrOutput}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		lines(io.TeeReader(pr, tail), out)
	}()
	err = cmd.Start()
	if err == nil {
		err = cmd.Wait()
	}
	pw.Close()
	// A child the command left running may hold the pipe open: stop reading once ctx ends
	// or, after the command exited, after a grace period.
	select {
	case <-copied:
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
	}
	pr.Close()
	if err != nil {
		return localExecError(req, command, err, tail.String())
	}
	return nil
}

// localExecError is terraform's message for a command that failed, without what a
// sensitive configuration would put in it: the command when it is sensitive; the output
// when anything is (a command prints what its environment holds); what the command could not
// start with when its interpreter or directory is.
func localExecError(req Request, command string, err error, output string) error {
	if req.sensitive("command") {
		command = SensitiveValue
	}
	if len(req.Sensitive) > 0 {
		output = suppressedOutput
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) && (req.sensitive("interpreter") || req.sensitive("working_dir")) {
		err = errors.New("cannot start the command (details suppressed due to sensitive value in config)")
	}
	return fmt.Errorf("local-exec provisioner error: Error running command '%s': %v. Output: %s", command, err, output)
}

// lines passes r to out line by line (a line longer than 64 KiB is cut into pieces).
func lines(r io.Reader, out func(string)) {
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			out(strings.TrimRight(string(line), "\r\n"))
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// ring keeps the last max bytes written to it.
type ring struct {
	max int
	buf []byte
}

func (r *ring) Write(p []byte) (int, error) {
	r.buf = append(r.buf, p...)
	if len(r.buf) > r.max {
		r.buf = append(r.buf[:0], r.buf[len(r.buf)-r.max:]...)
	}
	return len(p), nil
}

func (r *ring) String() string { return string(r.buf) }

func attr(obj cty.Value, name string) cty.Value {
	if obj.IsNull() || !obj.Type().IsObjectType() || !obj.Type().HasAttribute(name) {
		return cty.NullVal(cty.DynamicPseudoType)
	}
	return obj.GetAttr(name)
}

func str(obj cty.Value, name string) string {
	v := attr(obj, name)
	if v.IsNull() || v.Type() != cty.String {
		return ""
	}
	return v.AsString()
}
