package e2e

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/api"
)

// The hostile inputs of issue 11, each a single small request to a real `cairn server`
// process. Every one must be answered with a 4xx and a diagnostic naming its limit, the
// server's RSS must stay bounded, and a second client must keep being served meanwhile.
// The test logs a table (answer, time, peak RSS, the second client's slowest answer) that the
// docs and closing notes quote; it asserts no timings.

const timeRequired = `terraform {
  required_providers {
    time = { source = "hashicorp/time" }
  }
}
`

func nestedInterpolations(n int) string {
	return strings.Repeat(`"${`, n) + `"x"` + strings.Repeat(`}"`, n)
}

func billionLaughs() string {
	var b strings.Builder
	b.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		fmt.Fprintf(&b, "%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n", n, n, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = n
	}
	b.WriteString("Resources:\n  R:\n    Type: Custom::X\n    Properties:\n      ServiceToken: http://127.0.0.1:1/\n      Bomb: *i\n")
	return b.String()
}

func mergeBomb() string {
	var b strings.Builder
	b.WriteString("x0: &x0 {k0: v, k1: v, k2: v, k3: v, k4: v, k5: v, k6: v, k7: v}\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&b, "x%d: &x%d\n", i, i)
		for j := range 8 {
			fmt.Fprintf(&b, "  k%d: {<<: *x%d}\n", j, i-1)
		}
	}
	b.WriteString("Resources:\n  R:\n    Type: Custom::X\n    Properties: {ServiceToken: http://127.0.0.1:1/, Bomb: *x8}\n")
	return b.String()
}

func heredoc(lines int) string {
	var b strings.Builder
	b.WriteString("locals {\n  text = <<EOT\n")
	for i := range lines {
		fmt.Fprintf(&b, "line %d of a long heredoc\n", i)
	}
	b.WriteString("EOT\n}\noutput \"n\" { value = length(local.text) }\n")
	return b.String()
}

type hostile struct {
	name string
	req  api.DeployRequest
	want int    // the HTTP status
	says string // what the answer must contain
}

func hostileInputs() []hostile {
	tf := func(name, body, says string) hostile {
		return hostile{name: name, req: api.DeployRequest{Files: map[string]string{"main.tf": timeRequired + body}}, want: 400, says: says}
	}
	cfn := func(name, body, says string) hostile {
		return hostile{name: name, req: api.DeployRequest{TemplateName: "stack.yaml", Template: body}, want: 400, says: says}
	}
	withFiles := func(h hostile, kv ...string) hostile {
		for i := 0; i+1 < len(kv); i += 2 {
			h.req.Files[kv[i]] = kv[i+1]
		}
		return h
	}
	answered := func(h hostile) hostile { h.want = 200; return h }
	ok := answered(tf("heredoc of 16,000 lines", heredoc(16000), ""))
	var unknownCalls strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&unknownCalls, "  x%d = %s()\n", i, strings.Repeat("q", 2000))
	}
	return []hostile{
		tf("count = 2147483648", `resource "time_static" "a" { count = 2147483648 }`, "instances"),
		tf("count = 100000000", `resource "time_static" "a" { count = 100000000 }`, "instances"),
		tf("count = 9223372036854775808", `resource "time_static" "a" { count = 9223372036854775808 }`, "count"),
		tf("setproduct of three range(1000) in a local",
			`locals { p = setproduct(range(1000), range(1000), range(1000)) }
output "n" { value = length(local.p) }`, "elements"),
		tf("50,000 nested interpolations", "output \"o\" { value = "+nestedInterpolations(50000)+" }", "depth"),
		tf("nested for over range(1000) three deep",
			`output "o" { value = length(flatten([for a in range(1000): [for b in range(1000): [for c in range(1000): c]]])) }`, "elements"),
		ok,
		// evaluated at run time, parsed under the same guard (issue 12's review, P0-1..3, P2-12)
		withFiles(tf("templatefile of 50,000 nested interpolations", `output "o" { value = templatefile("deep.tpl", {}) }`, "depth"),
			"deep.tpl", strings.Repeat(`${"`, 50000)+"x"+strings.Repeat(`"}`, 50000)),
		tf("templatestring of 60,000 nested interpolations built by join", `locals {
  a = join("", [for i in range(1000) : "$${\""])
  b = join("", [for i in range(1000) : "\"}"])
  t = "${join("", [for i in range(60) : local.a])}x${join("", [for i in range(60) : local.b])}"
}
output "o" { value = templatestring(local.t, {}) }`, "depth"),
		answered(withFiles(tf("fileset with eight ** over a file 60 directories down",
			`output "o" { value = fileset(".", "**/**/**/**/**/**/**/**/b") }`, ""), strings.Repeat("a/", 60)+"x", "1")),
		answered(tf("a comment naming provider:: beside a 480 KB template",
			"locals {\n  x = \""+strings.Repeat("a$${b}", 80000)+"\"\n}\n# provider::x::\n", "")),
		tf("1,000 calls of unknown 2,000-character function names", "locals {\n"+unknownCalls.String()+"}\n", "There is no function named"),
		cfn("YAML billion laughs", billionLaughs(), "alias"),
		cfn("YAML merge-key bomb", mergeBomb(), "alias"),
		cfn("recursive YAML alias", "a: &a [*a]\nResources:\n  R: {Type: Custom::X, Properties: {ServiceToken: 'http://127.0.0.1:1/', B: *a}}\n", "alias"),
		cfn("9,999 nested flow lists", "Resources:\n  R: {Type: Custom::X, Properties: {ServiceToken: 'http://127.0.0.1:1/', B: "+
			strings.Repeat("[", 9999)+strings.Repeat("]", 9999)+"}}\n", "depth"),
	}
}

// rssSampler records the largest VmRSS of pid until stopped.
type rssSampler struct {
	mu   sync.Mutex
	peak int64
	stop chan struct{}
	done chan struct{}
}

func vmRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func sampleRSS(pid int) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			if r := vmRSS(pid); r > 0 {
				s.mu.Lock()
				s.peak = max(s.peak, r)
				s.mu.Unlock()
			}
			select {
			case <-s.stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return s
}

func (s *rssSampler) end() int64 {
	close(s.stop)
	<-s.done
	return s.peak
}

// secondClient lists stacks every 50 ms until stopped and returns its slowest answer.
func secondClient(base string) (stop func() (time.Duration, error)) {
	quit, done := make(chan struct{}), make(chan struct{})
	var worst time.Duration
	var failure error
	go func() {
		defer close(done)
		for {
			t0 := time.Now()
			resp, err := http.Get(base + "/v1/stacks")
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					err = fmt.Errorf("GET /v1/stacks = %d", resp.StatusCode)
				}
			}
			if err != nil && failure == nil {
				failure = err
			}
			worst = max(worst, time.Since(t0))
			select {
			case <-quit:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return func() (time.Duration, error) { close(quit); <-done; return worst, failure }
}

// timeServer starts a real `cairn server` that finds the hashicorp/time provider in a mirror
// of its own; it returns what restarting it on the same state needs.
func timeServer(t *testing.T) (bin, port, dir string, srv *exec.Cmd) {
	t.Helper()
	bin, err := buildCairn()
	if err != nil {
		t.Fatal(err)
	}
	_, rc := timeMirror(t)
	t.Setenv("TF_CLI_CONFIG_FILE", rc) // the server process inherits it
	port, dir = freePort(t), t.TempDir()
	return bin, port, dir, server(t, bin, port, dir)
}

func TestHostileRequestsAreRefused(t *testing.T) {
	_, port, _, srv := timeServer(t)
	base := "http://127.0.0.1:" + port
	var table []string
	for _, h := range hostileInputs() {
		body, _ := json.Marshal(h.req)
		rss := sampleRSS(srv.Process.Pid)
		stop := secondClient(base)
		t0 := time.Now()
		resp, err := http.Post(base+"/v1/stacks/hostile/preview", "application/json", bytes.NewReader(body))
		took := time.Since(t0)
		worst, ferr := stop()
		peak := rss.end()
		if err != nil {
			t.Fatalf("%s: the server did not answer: %v", h.name, err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != h.want || !strings.Contains(string(answer), h.says) {
			t.Errorf("%s: %d %.300s; want %d mentioning %q", h.name, resp.StatusCode, answer, h.want, h.says)
		}
		if h.want == 400 && !strings.Contains(string(answer), `"line"`) {
			t.Errorf("%s: the diagnostic has no source position: %.300s", h.name, answer)
		}
		if ferr != nil {
			t.Errorf("%s: the second client was not served meanwhile: %v", h.name, ferr)
		}
		if peak > 1<<30 {
			t.Errorf("%s: the server's RSS reached %d MB", h.name, peak>>20)
		}
		var e api.Error
		_ = json.Unmarshal(answer, &e)
		msg := e.Message
		if len(e.Diagnostics) > 0 {
			msg = e.Diagnostics[0].Summary + ": " + e.Diagnostics[0].Detail
		}
		table = append(table, fmt.Sprintf("| %s | %d %.90s | %.2f s | %d MB | %.0f ms |", h.name, resp.StatusCode,
			strings.ReplaceAll(msg, "\n", " "), took.Seconds(), peak>>20, float64(worst.Microseconds())/1000))
	}
	t.Logf("\n| input | answer | time | server peak RSS | second client's slowest answer |\n|---|---|---|---|---|\n%s", strings.Join(table, "\n"))
}

// TestUnknownAtPreviewFailsTheStepNotTheServer: an expression whose size is known only at
// apply passes validate and preview, then fails its step during the run with the budget's
// diagnostic; the server lives on, and after a kill -9 and restart nothing resumes.
func TestUnknownAtPreviewFailsTheStepNotTheServer(t *testing.T) {
	bin, port, dir, srv := timeServer(t)
	c := newClient("http://127.0.0.1:" + port)
	cfg := timeRequired + `resource "time_static" "a" {}
resource "time_static" "b" {
  triggers = { n = length(setproduct(range(1000), range(1000), range(length(time_static.a.id) > 0 ? 1000 : 0))) }
}
`
	req := api.DeployRequest{Files: map[string]string{"main.tf": cfg}}
	if _, err := c.Preview(bg, "bomb", req); err != nil {
		t.Fatalf("preview: %v", err)
	}
	rss := sampleRSS(srv.Process.Pid)
	op, err := c.Deploy(bg, "bomb", req)
	if err != nil {
		t.Fatal(err)
	}
	done := c.wait(t, op.ID)
	peak := rss.end()
	if done.Status != "failed" || done.StackStatus != "CREATE_FAILED" {
		t.Fatalf("deploy: %+v, want the stack CREATE_FAILED", done)
	}
	evs, err := c.Events(bg, "bomb", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var reason string
	for _, ev := range evs {
		if ev.LogicalID == "time_static.b" && ev.Status == "CREATE_FAILED" {
			reason = ev.Reason
		}
	}
	if !strings.Contains(reason, "elements") || !strings.Contains(reason, "main.tf:") {
		t.Errorf("time_static.b failed with %q, want the elements limit at main.tf:line", reason)
	}
	t.Logf("deploy answered %s in the run, server peak RSS %d MB", done.StackStatus, peak>>20)
	if err := srv.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	srv.Wait()
	server(t, bin, port, dir)
	if st := c.stack(t, "bomb"); st.Status != "CREATE_FAILED" || st.Operation != "" {
		t.Errorf("after a restart the stack is %s (operation %q), want CREATE_FAILED and idle", st.Status, st.Operation)
	}
}

// TestFunctionArchiveCannotEscape: an archive whose links go through links made by earlier
// entries is refused with a 400, and nothing is written outside the code directory.
func TestFunctionArchiveCannotEscape(t *testing.T) {
	bin, err := buildCairn()
	if err != nil {
		t.Fatal(err)
	}
	port, dir := freePort(t), t.TempDir()
	server(t, bin, port, dir)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	link := func(name, target string) {
		h := &zip.FileHeader{Name: name, Method: zip.Store}
		h.SetMode(os.ModeSymlink | 0o777)
		w, _ := zw.CreateHeader(h)
		io.WriteString(w, target)
	}
	link("a/b/c/d/l", "../../../..")
	link("a/b/c/d/l/m", "../../../..")
	w, _ := zw.Create("a/b/c/d/l/m/ESCAPED")
	io.WriteString(w, "written outside")
	w, _ = zw.Create("bootstrap")
	io.WriteString(w, "#!/bin/sh\n")
	zw.Close()
	body, _ := json.Marshal(api.CreateFunctionRequest{Name: "escape", Runtime: "provided", Handler: "bootstrap", Code: buf.Bytes()})
	resp, err := http.Post("http://127.0.0.1:"+port+"/v1/functions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("POST /v1/functions with an escaping archive = %d %s, want 400", resp.StatusCode, answer)
	}
	found := ""
	// The escape lands four levels above DIR/functions/code/NAME-ID: the parent of DIR.
	filepath.Walk(filepath.Dir(dir), func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Name() == "ESCAPED" {
			found = p
		}
		return nil
	})
	if found != "" {
		t.Errorf("the archive wrote %s", found)
	}
	resp, err = http.Get("http://127.0.0.1:" + port + "/v1/functions")
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), dir) {
			t.Errorf("GET /v1/functions shows the server's directory: %s", b)
		}
	}
}
