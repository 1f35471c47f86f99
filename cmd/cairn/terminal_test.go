package main

import (
	"bufio"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestDeployAsksOnATerminal runs cairn on a real pseudo-terminal, as a user at a shell does:
// deploy shows the plan and asks before acting, and acts only on "yes"; delete asks too.
func TestDeployAsksOnATerminal(t *testing.T) {
	h := &slowHandler{}
	srv := httptest.NewServer(h)
	defer srv.Close()
	file, dir := writeHelloTemplate(t), filepath.Join(t.TempDir(), ".cairn")

	// run starts cairn on a terminal, answers the question with answer once it is asked,
	// and returns everything cairn printed.
	run := func(answer string, args ...string) string {
		t.Helper()
		cmd := cairn(t, append(args, "--dir", dir)...)
		tty, err := pty.Start(cmd)
		if err != nil {
			t.Fatal(err)
		}
		defer tty.Close()
		timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
		defer timer.Stop()
		var out strings.Builder
		r := bufio.NewReader(tty)
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			out.Write(buf[:n])
			if strings.Contains(out.String(), "Enter a value: ") && answer != "" {
				io.WriteString(tty, answer+"\n")
				answer = ""
			}
			if err != nil { // the terminal closes when cairn exits
				break
			}
		}
		cmd.Wait()
		return out.String()
	}

	out := run("no", "deploy", "-f", file, "--stack", "web", "--parameter", "Url="+srv.URL)
	if !strings.Contains(out, "Add     Hello") || !strings.Contains(out, "Only 'yes' will be accepted") || !strings.Contains(out, "Deploy cancelled.") {
		t.Fatalf("deploy answered no:\n%s", out)
	}
	h.mu.Lock()
	creates := h.creates
	h.mu.Unlock()
	if creates != 0 {
		t.Fatalf("a deploy answered no sent %d Create", creates)
	}
	out = run("yes", "deploy", "-f", file, "--stack", "web", "--parameter", "Url="+srv.URL)
	if !strings.Contains(out, "CREATE_COMPLETE") {
		t.Fatalf("deploy answered yes:\n%s", out)
	}
	out = run("yes", "delete", "--stack", "web")
	if !strings.Contains(out, "Hello  Custom::Hello  phys-1") || !strings.Contains(out, "DELETE_COMPLETE") {
		t.Fatalf("delete answered yes:\n%s", out)
	}
}
