package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// liveRun is a cairn command running in the background whose output a test reads as it
// comes, to interrupt it at a chosen moment (Ctrl-C tests).
type liveRun struct {
	cmd    *exec.Cmd
	sc     *bufio.Scanner
	seen   strings.Builder // stdout read so far
	stderr bytes.Buffer
}

// startLive starts cmd and reads its stdout until a line satisfies until (or the output
// ends).
func startLive(t *testing.T, cmd *exec.Cmd, until func(line string) bool) *liveRun {
	t.Helper()
	r := &liveRun{cmd: cmd}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.sc = bufio.NewScanner(stdout)
	for r.sc.Scan() {
		r.seen.WriteString(r.sc.Text() + "\n")
		if until(r.sc.Text()) {
			break
		}
	}
	return r
}

// interrupt sends SIGINT, reads the rest of the output and requires the command to fail
// saying the operation was cancelled, as terraform does after an interrupt.
func (r *liveRun) interrupt(t *testing.T) {
	t.Helper()
	if err := r.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for r.sc.Scan() {
		r.seen.WriteString(r.sc.Text() + "\n")
	}
	err := r.cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 || !strings.Contains(r.stderr.String(), "Operation cancelled by the user") {
		t.Fatalf("cairn deploy after Ctrl-C: %v, want a failure saying it was cancelled\n%s%s", err, r.seen.String(), r.stderr.String())
	}
}
