package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/app"
)

// TestProviderCommands runs `cairn provider ...` in-process, each command a fresh start over
// one state directory, as a user would.
func TestProviderCommands(t *testing.T) {
	const urn = "urn:fss:cn-north-4:0a1b2c3d4e5f60718293a4b5c6d7e8f9:function:default:acme-fn:latest"
	dir := filepath.Join(t.TempDir(), ".cairn")
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		env := Env{Stdout: &stdout, Stderr: &stderr, Start: app.Start,
			Getenv: func(k string) string { return map[string]string{"CAIRN_DIR": dir}[k] }}
		code := Run(context.Background(), args, env)
		return code, stdout.String(), stderr.String()
	}
	steps := []struct {
		args     []string
		code     int
		contains []string // in stdout+stderr
	}{
		{[]string{"provider", "list"}, 0, []string{"no private providers"}},
		{[]string{"provider", "create", "acme", "--description", "widgets", "--version", "1.0.0", "--function-urn", urn}, 0,
			[]string{"created private provider acme", "source: huawei.com/private-provider/acme", "version: 1.0.0 -> " + urn}},
		{[]string{"provider", "create", "acme"}, 1, []string{"error: private provider acme already exists (RF.10019001)"}},
		{[]string{"provider", "create", "Acme"}, 1, []string{"provider_name \"Acme\"", "RF.10011003"}},
		{[]string{"provider", "create", "x", "--version", "1.0.0"}, 2, []string{"--version and --function-urn go together"}},
		{[]string{"provider", "create"}, 2, []string{"takes 1 argument(s): [NAME]"}},
		{[]string{"provider", "list"}, 0, []string{"NAME", "acme", "huawei.com/private-provider/acme", "widgets"}},
		{[]string{"provider", "update", "acme"}, 2, []string{"give --description"}},
		{[]string{"provider", "update", "acme", "--description", "better widgets"}, 0, []string{"updated private provider acme"}},
		{[]string{"provider", "version", "create", "acme", "--version", "1.1.0", "--function-urn", urn, "--description", "faster"}, 0,
			[]string{"created version 1.1.0 of private provider acme"}},
		{[]string{"provider", "version", "create", "acme", "--version", "1.1.0", "--function-urn", urn}, 1, []string{"already has version 1.1.0"}},
		{[]string{"provider", "version", "create", "acme", "--version", "1.2.0"}, 2, []string{"give --version and --function-urn"}},
		{[]string{"provider", "show", "acme"}, 0, []string{"better widgets", "huawei.com/private-provider/acme", "1.1.0", "1.0.0", "faster"}},
		{[]string{"provider", "version", "list", "acme"}, 0, []string{"VERSION", "1.1.0", "1.0.0"}},
		{[]string{"provider", "version", "show", "acme", "1.1.0"}, 0, []string{"version:", "1.1.0", "function:", urn, "faster"}},
		{[]string{"provider", "version", "show", "acme", "2.0.0"}, 1, []string{"private provider acme has no version 2.0.0"}},
		{[]string{"provider", "version", "delete", "acme", "1.1.0"}, 0, []string{"deleted version 1.1.0 of private provider acme"}},
		{[]string{"provider", "version", "show", "acme"}, 2, []string{"takes 2 argument(s)"}},
		{[]string{"provider", "delete", "acme"}, 0, []string{"deleted private provider acme and its versions"}},
		{[]string{"provider", "show", "acme"}, 1, []string{"private provider acme does not exist"}},
	}
	for _, s := range steps {
		code, out, errOut := run(s.args...)
		if code != s.code {
			t.Fatalf("cairn %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(s.args, " "), code, s.code, out, errOut)
		}
		for _, want := range s.contains {
			if !strings.Contains(out+errOut, want) {
				t.Errorf("cairn %s: output lacks %q\nstdout:\n%s\nstderr:\n%s", strings.Join(s.args, " "), want, out, errOut)
			}
		}
	}

	// JSON output is the API's objects.
	if code, _, errOut := run("provider", "create", "json-one", "--description", "j"); code != 0 {
		t.Fatalf("create: %s", errOut)
	}
	code, out, errOut := run("provider", "list", "-o", "json")
	var ps []api.PrivateProvider
	if code != 0 || json.Unmarshal([]byte(out), &ps) != nil || len(ps) != 1 || ps[0].ProviderName != "json-one" {
		t.Errorf("provider list -o json: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = run("provider", "version", "list", "json-one", "-o", "json")
	if diff := cmp.Diff("[]\n", out); code != 0 || diff != "" {
		t.Errorf("version list -o json of a provider without versions: exit %d -want +got\n%s", code, diff)
	}
}

// TestServerTenantsFlag: --tenants reads the file into app.Config.Tenants.
func TestServerTenantsFlag(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tenants")
	os.WriteFile(file, []byte("# who may call\nacme  tok-acme\nglobex tok-globex\n"), 0o600)
	var got app.Config
	env := Env{Stderr: new(strings.Builder), Start: func(_ context.Context, cfg app.Config) (*app.App, error) {
		got = cfg
		return nil, context.DeadlineExceeded
	}}
	Run(context.Background(), []string{"server", "--tenants", file, "--dir", t.TempDir()}, env)
	if diff := cmp.Diff(map[string]string{"tok-acme": "acme", "tok-globex": "globex"}, got.Tenants); diff != "" {
		t.Errorf("--tenants: -want +got\n%s", diff)
	}
	os.WriteFile(file, []byte("acme\n"), 0o600)
	stderr := new(strings.Builder)
	env.Stderr = stderr
	if code := Run(context.Background(), []string{"server", "--tenants", file}, env); code != 1 || !strings.Contains(stderr.String(), file+":1:") {
		t.Errorf("a bad tenants file: exit %d, stderr %q", code, stderr)
	}
}
