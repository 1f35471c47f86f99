package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/app"
	"github.com/cairn-dev/cairn/internal/budget"
)

// TestServerLimitFlags: each --max-* flag sets its limit, its CAIRN_MAX_* variable applies
// when the flag is not given, and none leaves the defaults (zero) to the engine.
func TestServerLimitFlags(t *testing.T) {
	cases := map[string]struct {
		args []string
		env  map[string]string
		want budget.Limits
	}{
		"None": {},
		"Flags": {args: []string{"--max-depth", "50", "--max-alias-nodes", "10", "--max-instances", "20", "--max-resources", "30",
			"--max-elements", "40", "--max-bytes", "60", "--max-eval-time", "5s"},
			env:  map[string]string{"CAIRN_MAX_DEPTH": "7"},
			want: budget.Limits{Depth: 50, AliasNodes: 10, Instances: 20, Resources: 30, Elements: 40, Bytes: 60, Time: 5 * time.Second}},
		"Env": {env: map[string]string{"CAIRN_MAX_ELEMENTS": "1000", "CAIRN_MAX_EVAL_TIME": "2s", "CAIRN_MAX_RESOURCES": "-1"},
			want: budget.Limits{Elements: 1000, Time: 2 * time.Second, Resources: -1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got app.Config
			env := Env{Stderr: new(strings.Builder), Getenv: func(k string) string { return tc.env[k] },
				Start: func(_ context.Context, cfg app.Config) (*app.App, error) {
					got = cfg
					return nil, context.DeadlineExceeded
				}}
			Run(context.Background(), append([]string{"server", "--dir", t.TempDir()}, tc.args...), env)
			if diff := cmp.Diff(tc.want, got.Limits); diff != "" {
				t.Errorf("Limits: -want +got\n%s", diff)
			}
		})
	}
	stderr := new(strings.Builder)
	env := Env{Stderr: stderr, Getenv: func(k string) string { return map[string]string{"CAIRN_MAX_BYTES": "lots"}[k] }}
	if code := Run(context.Background(), []string{"server", "--dir", t.TempDir()}, env); code == 0 || !strings.Contains(stderr.String(), "CAIRN_MAX_BYTES") {
		t.Errorf("a bad CAIRN_MAX_BYTES: exit %d, %q; want a usage error naming it", code, stderr.String())
	}
}

// TestInProcessLimitsFromEnv: a command that starts cairn in-process (deploy without
// --server) takes its limits from the CAIRN_MAX_* variables, as `cairn server` does, so that a
// stack too large for the defaults deploys without a server; a bad value is a usage error.
func TestInProcessLimitsFromEnv(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`resource "terraform_data" "a" {}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var got app.Config
	env := Env{Stderr: new(strings.Builder), Stdout: new(strings.Builder),
		Getenv: func(k string) string {
			return map[string]string{"CAIRN_MAX_ELEMENTS": "-1", "CAIRN_MAX_EVAL_TIME": "5m"}[k]
		},
		Start: func(_ context.Context, cfg app.Config) (*app.App, error) {
			got = cfg
			return nil, context.DeadlineExceeded
		}}
	Run(context.Background(), []string{"deploy", "--stack", "s", "-f", dir, "--dir", t.TempDir()}, env)
	if want := (budget.Limits{Elements: -1, Time: 5 * time.Minute}); !cmp.Equal(want, got.Limits) {
		t.Errorf("in-process Limits: %+v, want %+v", got.Limits, want)
	}
	stderr := new(strings.Builder)
	env = Env{Stderr: stderr, Stdout: new(strings.Builder), Getenv: func(k string) string {
		return map[string]string{"CAIRN_MAX_INSTANCES": "many"}[k]
	}, Start: env.Start}
	if code := Run(context.Background(), []string{"deploy", "--stack", "s", "-f", dir, "--dir", t.TempDir()}, env); code == 0 ||
		!strings.Contains(stderr.String(), "CAIRN_MAX_INSTANCES") {
		t.Errorf("a bad CAIRN_MAX_INSTANCES: exit %d, %q; want an error naming it", code, stderr.String())
	}
}
