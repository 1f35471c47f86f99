package provisioner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"
)

var remoteExecSpec = hcldec.ObjectSpec{
	"inline":  &hcldec.AttrSpec{Name: "inline", Type: cty.List(cty.String)},
	"script":  &hcldec.AttrSpec{Name: "script", Type: cty.String},
	"scripts": &hcldec.AttrSpec{Name: "scripts", Type: cty.List(cty.String)},
}

// validateRemoteExec is terraform's check of a remote-exec block: one of inline, script and
// scripts.
func validateRemoteExec(cfg cty.Value) *Invalid {
	set := 0
	for _, name := range []string{"inline", "script", "scripts"} {
		if !attr(cfg, name).IsNull() {
			set++
		}
	}
	if set != 1 {
		return &Invalid{Summary: "Invalid remote-exec provisioner configuration", Detail: `Only one of "inline", "script", or "scripts" must be set`}
	}
	return nil
}

// remoteExec runs scripts on the remote machine as terraform's remote-exec provisioner: each
// script (the inline lines joined, or a local script file) is uploaded to script_path, made
// executable and run in a terminal; what it prints is the provisioner's output.
func remoteExec(ctx context.Context, req Request) error {
	if err := runRemote(ctx, req); err != nil {
		return fmt.Errorf("remote-exec provisioner error: %w", err)
	}
	return nil
}

func runRemote(ctx context.Context, req Request) error {
	if inv := validateRemoteExec(req.Config); inv != nil {
		return errors.New(inv.Detail)
	}
	out := req.Output
	if out == nil {
		out = func(string) {}
	}
	conn, err := parseConnection(req.Connection)
	if err != nil {
		return err
	}
	scripts, err := collectScripts(req.Config, req.Dir)
	if err != nil {
		return err
	}
	client, err := connectSSH(ctx, conn, func() { announce(conn, out) })
	if err != nil {
		return err
	}
	defer client.Close()
	out("Connected!")

	for _, script := range scripts {
		remote := strings.ReplaceAll(conn.scriptPath, "%RAND%", strconv.FormatInt(int64(rand.Int32()), 10))
		if err := client.uploadScript(remote, script); err != nil {
			return fmt.Errorf("Failed to upload script: %v", err)
		}
		stdout, stderr := &lineWriter{out: out}, &lineWriter{out: out}
		err := client.run(remote, nil, stdout, stderr, conn.targetPlatform != targetPlatformWindows)
		stdout.flush()
		stderr.flush()
		var notStarted *startError
		switch {
		case errors.As(err, &notStarted):
			return fmt.Errorf("Error starting script: %v", notStarted.error)
		case err != nil:
			return fmt.Errorf("error executing %q: %v", remote, err)
		}
		// Best effort, as terraform: leave no script content behind on the machine.
		_ = client.uploadFile(remote, strings.NewReader(""), 0)
	}
	return nil
}

// announce prints the connection's settings before each attempt, as terraform does.
func announce(c *connection, out func(string)) {
	out("Connecting to remote host via SSH...")
	c.endpoint.announce(out)
	out("  Target Platform: " + c.targetPlatform)
	if b := c.bastion; b != nil {
		out("Using configured bastion host...")
		b.announce(out)
	}
}

// announce prints the settings terraform prints for the target and for a bastion alike.
func (e endpoint) announce(out func(string)) {
	out("  Host: " + e.host)
	out("  User: " + e.user)
	out(fmt.Sprintf("  Password: %t", e.password != ""))
	out(fmt.Sprintf("  Private key: %t", e.privateKey != ""))
	out(fmt.Sprintf("  Certificate: %t", e.certificate != ""))
	out("  SSH Agent: false")
	out(fmt.Sprintf("  Checking Host Key: %t", e.hostKey != ""))
}

// collectScripts reads the scripts to run: the inline lines as one script, or the script
// files (relative to dir).
func collectScripts(cfg cty.Value, dir string) ([][]byte, error) {
	if inline := attr(cfg, "inline"); !inline.IsNull() {
		var lines []string
		for _, l := range inline.AsValueSlice() {
			if l.IsNull() {
				return nil, errors.New("invalid null string in 'scripts'")
			}
			if l.AsString() == "" {
				return nil, errors.New("invalid empty string in 'scripts'")
			}
			lines = append(lines, l.AsString())
		}
		return [][]byte{[]byte(strings.Join(append(lines, ""), "\n"))}, nil
	}
	var names []string
	if s := attr(cfg, "script"); !s.IsNull() {
		if s.AsString() == "" {
			return nil, errors.New("invalid empty string in 'script'")
		}
		names = append(names, s.AsString())
	}
	if list := attr(cfg, "scripts"); !list.IsNull() {
		for _, s := range list.AsValueSlice() {
			if s.IsNull() {
				return nil, errors.New("invalid null string in 'script'")
			}
			if s.AsString() == "" {
				return nil, errors.New("invalid empty string in 'script'")
			}
			names = append(names, s.AsString())
		}
	}
	var out [][]byte
	for _, name := range names {
		p, err := localPath(dir, name)
		if err == nil {
			var b []byte
			if b, err = os.ReadFile(p); err == nil {
				out = append(out, b)
				continue
			}
			var pe *os.PathError
			if errors.As(err, &pe) {
				pe.Path = name
			}
		}
		return nil, fmt.Errorf("Failed to open script '%s': %v", name, err)
	}
	return out, nil
}

// uploadScript uploads a script, with a #!/bin/sh line when it has none (not on Windows),
// and makes it executable, as terraform's UploadScript.
func (c *sshClient) uploadScript(remote string, script []byte) error {
	if len(script) < 2 {
		return fmt.Errorf("Error reading script: %s", io.EOF)
	}
	var b bytes.Buffer
	if string(script[:2]) != "#!" && c.conn.targetPlatform != targetPlatformWindows {
		b.WriteString("#!/bin/sh\n")
	}
	b.Write(script)
	if err := c.uploadFile(remote, bytes.NewReader(b.Bytes()), int64(b.Len())); err != nil {
		return err
	}
	if c.conn.targetPlatform == targetPlatformWindows {
		return nil
	}
	var stdout, stderr bytes.Buffer
	command := "chmod 0777 " + remote
	if err := c.run(command, nil, &stdout, &stderr, true); err != nil {
		var notStarted *startError
		if errors.As(err, &notStarted) {
			return fmt.Errorf("Error chmodding script file to 0777 in remote machine: %s", notStarted.error)
		}
		return fmt.Errorf("Error chmodding script file to 0777 in remote machine error executing %q: %v: %s %s", command, err, stdout.String(), stderr.String())
	}
	return nil
}

// lineWriter passes what is written to out line by line (a terminal's "\r\n" too).
type lineWriter struct {
	mu  sync.Mutex
	out func(string)
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.out(strings.TrimRight(string(w.buf[:i]), "\r"))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64*1024 { // a line without end: pass it in pieces
		w.out(string(w.buf))
		w.buf = nil
	}
	return len(p), nil
}

func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.out(strings.TrimRight(string(w.buf), "\r"))
		w.buf = nil
	}
}

var _ io.Writer = (*lineWriter)(nil)
