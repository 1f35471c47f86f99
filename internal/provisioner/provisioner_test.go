//go:build unix

package provisioner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// decode decodes a local-exec block body as the language does.
func decode(t *testing.T, src string) cty.Value {
	t.Helper()
	f, ds := hclsyntax.ParseConfig([]byte(src), "p.tf", hcl.InitialPos)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	spec, _ := Spec(LocalExec)
	v, ds := hcldec.Decode(f.Body, spec, nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	return v
}

type collected struct {
	mu  sync.Mutex
	got []string
}

func (l *collected) add(s string) {
	l.mu.Lock()
	l.got = append(l.got, s)
	l.mu.Unlock()
}

func TestLocalExec(t *testing.T) {
	t.Setenv("CAIRN_TEST_SECRET", "leaked")
	t.Setenv("PROVISIONER_TEST_KEPT", "kept")
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		src  string
		want []string
	}{
		"output and environment": {
			src: `command = "echo one; echo two >&2; echo $GREETING; echo $${CAIRN_TEST_SECRET:-no-cairn-env} $PROVISIONER_TEST_KEPT"
			      environment = { GREETING = "hello" }`,
			want: []string{`Executing: ["/bin/sh" "-c" "echo one; echo two >&2; echo $GREETING; echo ${CAIRN_TEST_SECRET:-no-cairn-env} $PROVISIONER_TEST_KEPT"]`,
				"one", "two", "hello", "no-cairn-env kept"},
		},
		"working_dir relative to the configuration": {
			src:  `command = "basename \"$PWD\""` + "\n" + `working_dir = "sub"`,
			want: []string{`Executing: ["/bin/sh" "-c" "basename \"$PWD\""]`, "sub"},
		},
		"interpreter": {
			src:  `command = "print('py' if False else 'interp')"` + "\n" + `interpreter = ["/bin/sh", "-c", "echo $0", "x"]`,
			want: []string{`Executing: ["/bin/sh" "-c" "echo $0" "x" "print('py' if False else 'interp')"]`, "x"},
		},
		"quiet hides the command, not its output": {
			src:  `command = "echo secret-free"` + "\n" + `quiet = true`,
			want: []string{"local-exec: Executing: Suppressed by quiet=true", "secret-free"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			var out collected
			err := Run(context.Background(), Request{Type: LocalExec, Config: decode(t, tc.src), Dir: dir, Output: out.add})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, out.got); d != "" {
				t.Errorf("output (-want +got):\n%s", d)
			}
		})
	}
}

func TestLocalExecFailure(t *testing.T) {
	err := Run(context.Background(), Request{Type: LocalExec, Config: decode(t, `command = "echo before; exit 3"`), Dir: t.TempDir()})
	want := "local-exec provisioner error: Error running command 'echo before; exit 3': exit status 3. Output: before\n"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

// A failure of a command whose configuration held sensitive values repeats neither them nor
// the output: terraform prints both on the terminal; cairn stores the failure.
func TestLocalExecSensitiveFailure(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		src       string
		sensitive []string
		want      string
	}{
		"command": {
			src:       `command = "echo s3cret; exit 3"`,
			sensitive: []string{"command"},
			want:      "local-exec provisioner error: Error running command '(sensitive value)': exit status 3. Output: (output suppressed due to sensitive value in config)",
		},
		"environment": {
			src:       `command = "echo $PW; exit 3"` + "\n" + `environment = { PW = "s3cret" }`,
			sensitive: []string{"environment"},
			want:      "local-exec provisioner error: Error running command 'echo $PW; exit 3': exit status 3. Output: (output suppressed due to sensitive value in config)",
		},
		"working_dir": {
			src:       `command = "true"` + "\n" + `working_dir = "/s3cret/missing"`,
			sensitive: []string{"working_dir"},
			want: "local-exec provisioner error: Error running command 'true': cannot start the command (details suppressed due to sensitive value in config). " +
				"Output: (output suppressed due to sensitive value in config)",
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := Run(context.Background(), Request{Type: LocalExec, Config: decode(t, tc.src), Dir: dir, Sensitive: tc.sensitive})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error = %v\nwant    %s", err, tc.want)
			}
		})
	}
}

// A cancelled run kills the command and what it started, and returns promptly.
func TestLocalExecCancel(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Request{Type: LocalExec, Config: decode(t, `command = "sleep 30 & sleep 30; touch late"`), Dir: dir})
	}()
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "signal: killed") {
			t.Fatalf("error = %v, want the command killed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if _, err := os.Stat(filepath.Join(dir, "late")); err == nil {
		t.Fatal("the command went on after it was killed")
	}
}

func TestKnown(t *testing.T) {
	for _, typ := range []string{LocalExec, File, RemoteExec} {
		if _, ok := Spec(typ); !ok || !Known(typ) {
			t.Errorf("%s: not known", typ)
		}
	}
	if Known("chef") {
		t.Error("chef known")
	}
	if err := Run(context.Background(), Request{Type: "chef"}); err == nil {
		t.Error("Run ran an unknown provisioner")
	}
}
