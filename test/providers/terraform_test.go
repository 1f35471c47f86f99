package providers_test

// These tests build cmd/cairntest5 and cmd/cairntest6 and drive them with the real terraform
// CLI, offline, from a filesystem mirror: they prove the providers correct independently of
// cairn. They skip when terraform is not on PATH.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

const version = "0.1.0"

var (
	buildMu  sync.Mutex
	mirrors  = map[int]string{}
	buildDir string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cairntest-mirror-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// mirror builds the provider for protocol into a filesystem mirror of its own (once per test
// binary) and returns the mirror's directory.
func mirror(t *testing.T, protocol int) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if m, ok := mirrors[protocol]; ok {
		return m
	}
	m := filepath.Join(buildDir, fmt.Sprintf("mirror%d", protocol))
	bin := filepath.Join(m, "registry.terraform.io", "cairn-dev", "cairntest", version,
		runtime.GOOS+"_"+runtime.GOARCH, "terraform-provider-cairntest_v"+version)
	cmd := exec.Command("go", "build", "-ldflags", "-X main.version="+version, "-o", bin,
		fmt.Sprintf("./cmd/cairntest%d", protocol))
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build cairntest%d: %v\n%s", protocol, err, out)
	}
	mirrors[protocol] = m
	return m
}

// tf runs terraform in one working directory.
type tf struct {
	t   *testing.T
	dir string
	env []string
}

func newTF(t *testing.T, protocol int) *tf {
	t.Helper()
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Skip("terraform CLI not on PATH")
	}
	rc := filepath.Join(t.TempDir(), "terraformrc")
	body := fmt.Sprintf("disable_checkpoint = true\nprovider_installation {\n  filesystem_mirror {\n    path    = %q\n    include = [\"registry.terraform.io/cairn-dev/*\"]\n  }\n}\n", mirror(t, protocol))
	if err := os.WriteFile(rc, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "TF_CLI_CONFIG_FILE" || k == "TF_PLUGIN_CACHE_DIR" || k == "CAIRNTEST_STATE_DIR" || strings.HasPrefix(k, "TF_LOG") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "TF_CLI_CONFIG_FILE="+rc, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_INPUT=0")
	return &tf{t: t, dir: t.TempDir(), env: env}
}

func (w *tf) write(config string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.dir, "main.tf"), []byte(config), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// run runs terraform and returns its stdout and stderr together, and its exit code.
func (w *tf) run(args ...string) (string, int) {
	w.t.Helper()
	full := args
	if args[0] != "state" { // the state subcommands take no -no-color
		full = append([]string{args[0], "-no-color"}, args[1:]...)
	}
	cmd := exec.Command("terraform", full...)
	cmd.Dir = w.dir
	cmd.Env = w.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &exit):
		return out.String(), exit.ExitCode()
	default:
		w.t.Fatalf("terraform %s: %v", strings.Join(args, " "), err)
		return "", -1
	}
}

// ok runs terraform and fails the test unless it exits 0.
func (w *tf) ok(args ...string) string {
	w.t.Helper()
	out, code := w.run(args...)
	if code != 0 {
		w.t.Fatalf("terraform %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// fails runs terraform, wants exit code 1 and an output containing each of wants.
func (w *tf) fails(wants []string, args ...string) string {
	w.t.Helper()
	out, code := w.run(args...)
	if code != 1 {
		w.t.Fatalf("terraform %s: exit %d, want 1\n%s", strings.Join(args, " "), code, out)
	}
	for _, want := range wants {
		if !strings.Contains(out, want) {
			w.t.Errorf("terraform %s: output lacks %q\n%s", strings.Join(args, " "), want, out)
		}
	}
	return out
}

// planExit runs plan -detailed-exitcode: 0 no changes, 2 changes.
func (w *tf) planExit() int {
	w.t.Helper()
	out, code := w.run("plan", "-detailed-exitcode")
	if code == 1 {
		w.t.Fatalf("terraform plan: %s", out)
	}
	if code == 2 {
		w.t.Logf("plan has changes:\n%s", out)
	}
	return code
}

func (w *tf) outputs() map[string]any {
	w.t.Helper()
	var outs map[string]struct {
		Value any `json:"value"`
	}
	if err := json.Unmarshal([]byte(w.ok("output", "-json")), &outs); err != nil {
		w.t.Fatal(err)
	}
	m := map[string]any{}
	for k, v := range outs {
		m[k] = v.Value
	}
	return m
}

type resourceJSON struct {
	Address string         `json:"address"`
	Mode    string         `json:"mode"`
	Tainted bool           `json:"tainted"`
	Values  map[string]any `json:"values"`
}

// resources returns the state's resources by address.
func (w *tf) resources() map[string]resourceJSON {
	w.t.Helper()
	var show struct {
		Values struct {
			RootModule struct {
				Resources []resourceJSON `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(w.ok("show", "-json")), &show); err != nil {
		w.t.Fatal(err)
	}
	m := map[string]resourceJSON{}
	for _, r := range show.Values.RootModule.Resources {
		m[r.Address] = r
	}
	return m
}

type changeJSON struct {
	Address string `json:"address"`
	Change  struct {
		Actions      []string       `json:"actions"`
		AfterUnknown map[string]any `json:"after_unknown"`
	} `json:"change"`
}

// plan saves a plan and returns its resource changes by address.
func (w *tf) plan() map[string]changeJSON {
	w.t.Helper()
	w.ok("plan", "-out=tfplan")
	var plan struct {
		ResourceChanges []changeJSON `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(w.ok("show", "-json", "tfplan")), &plan); err != nil {
		w.t.Fatal(err)
	}
	m := map[string]changeJSON{}
	for _, c := range plan.ResourceChanges {
		m[c.Address] = c
	}
	return m
}

// diagnostics returns the diagnostics in terraform's -json output as "severity: summary: detail".
func diagnostics(t *testing.T, out string) []string {
	t.Helper()
	var diags []string
	for _, line := range strings.Split(out, "\n") {
		var msg struct {
			Type       string `json:"type"`
			Diagnostic struct {
				Severity, Summary, Detail string
			} `json:"diagnostic"`
		}
		if json.Unmarshal([]byte(line), &msg) != nil || msg.Type != "diagnostic" {
			continue
		}
		d := msg.Diagnostic
		diags = append(diags, d.Severity+": "+d.Summary+": "+d.Detail)
	}
	return diags
}

func wantActions(t *testing.T, changes map[string]changeJSON, addr string, want ...string) {
	t.Helper()
	if got := changes[addr].Change.Actions; !slices.Equal(got, want) {
		t.Errorf("%s: actions %v, want %v", addr, got, want)
	}
}

func want(t *testing.T, what string, got, want any) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func thingFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "thing-*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	return files
}

func readThing(t *testing.T, dir, id string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "thing-"+id+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

var hexID = regexp.MustCompile(`^[0-9a-f]{16}$`)

// thingConfig is one cairntest_thing block.
type thingConfig struct {
	label, name string
	size        int
	failOn      string
	settings    bool // protocol 6: set the nested attribute
}

func (c thingConfig) hcl() string {
	var b strings.Builder
	fmt.Fprintf(&b, "resource \"cairntest_thing\" %q {\n  name   = %q\n  size   = %d\n", c.label, c.name, c.size)
	b.WriteString("  tags   = { env = \"test\", team = \"cairn\" }\n  secret = \"hunter2\"\n")
	if c.failOn != "" {
		fmt.Fprintf(&b, "  fail_on = %q\n", c.failOn)
	}
	if c.settings {
		b.WriteString("  settings = {\n    mode     = \"fast\"\n    replicas = 2\n  }\n")
	}
	b.WriteString("  rule {\n    port = 80\n  }\n  rule {\n    port     = 443\n    protocol = \"udp\"\n  }\n}\n")
	return b.String()
}

// header is the terraform block and the provider block with args in it.
func header(args string) string {
	return "terraform {\n  required_providers {\n    cairntest = {\n      source  = \"cairn-dev/cairntest\"\n" +
		"      version = \"" + version + "\"\n    }\n  }\n}\nprovider \"cairntest\" {\n" + args + "}\n"
}

const readers = `
resource "cairntest_fast" "f" {
  count = 3
  value = "v${count.index}"
}
data "cairntest_echo" "e" {
  input = cairntest_thing.a.id
}
data "cairntest_thing" "a" {
  id = cairntest_thing.a.id
}
output "id" {
  value = cairntest_thing.a.id
}
output "revision" {
  value = cairntest_thing.a.revision
}
output "created_at" {
  value = cairntest_thing.a.created_at
}
output "echo" {
  value = data.cairntest_echo.e
}
output "lookup" {
  value     = data.cairntest_thing.a
  sensitive = true
}
output "fast_ids" {
  value = cairntest_fast.f[*].id
}
`

func TestTerraformProtocol5(t *testing.T) { t.Parallel(); lifecycle(t, 5) }
func TestTerraformProtocol6(t *testing.T) { t.Parallel(); lifecycle(t, 6) }

// lifecycle takes the provider through create, no-op plan, in-place update, replacement,
// import, drift, warnings and forced failures, and destroy.
func lifecycle(t *testing.T, protocol int) {
	w := newTF(t, protocol)
	state := t.TempDir()
	v6 := protocol == 6
	a := thingConfig{label: "a", name: "alpha", size: 10, settings: v6}
	config := func(extra ...thingConfig) string {
		s := header(fmt.Sprintf("  state_dir = %q\n  api_token = \"t0ken\"\n", state)) + readers
		for _, c := range extra {
			s += c.hcl()
		}
		return s
	}

	// Create.
	w.write(config(a))
	w.ok("init")
	w.ok("apply", "-auto-approve")
	out := w.outputs()
	id, _ := out["id"].(string)
	if !hexID.MatchString(id) {
		t.Fatalf("id %q is not 16 hex digits", id)
	}
	want(t, "revision", out["revision"], 1)
	createdAt := out["created_at"]
	echo := out["echo"].(map[string]any)
	want(t, "echo.output", echo["output"], id)
	want(t, "echo.length", echo["length"], 16)
	want(t, "echo.things", echo["things"], 1)
	lookup := out["lookup"].(map[string]any)
	want(t, "lookup.name", lookup["name"], "alpha")
	want(t, "lookup.size", lookup["size"], 10)
	want(t, "lookup.secret", lookup["secret"], "hunter2")
	want(t, "lookup.tags", lookup["tags"], map[string]any{"env": "test", "team": "cairn"})
	want(t, "lookup.rules", lookup["rules"], []any{
		map[string]any{"port": 80, "protocol": "tcp"},
		map[string]any{"port": 443, "protocol": "udp"},
	})
	fast := out["fast_ids"].([]any)
	if len(fast) != 3 || !strings.HasPrefix(fast[0].(string), "fast-") {
		t.Errorf("fast_ids = %v", fast)
	}
	want(t, "thing files", thingFiles(t, state), []string{"thing-" + id + ".json"})
	res := w.resources()["cairntest_thing.a"].Values
	want(t, "rule", res["rule"], lookup["rules"])
	if v6 {
		want(t, "settings", res["settings"], map[string]any{"mode": "fast", "replicas": 2})
	} else if _, ok := res["settings"]; ok {
		t.Errorf("protocol 5 state has settings: %v", res)
	}

	// Nothing changed: an empty plan (no perpetual diff from defaults, blocks or computed values).
	want(t, "plan exit code", w.planExit(), 0)

	// In-place update: id and created_at kept, revision unknown in the plan, then 2.
	a.size = 20
	w.write(config(a))
	changes := w.plan()
	wantActions(t, changes, "cairntest_thing.a", "update")
	want(t, "after_unknown.revision", changes["cairntest_thing.a"].Change.AfterUnknown["revision"], true)
	if _, ok := changes["cairntest_thing.a"].Change.AfterUnknown["id"]; ok {
		t.Error("id unknown in an update plan")
	}
	w.ok("apply", "tfplan")
	out = w.outputs()
	want(t, "id after update", out["id"], id)
	want(t, "revision after update", out["revision"], 2)
	want(t, "created_at after update", out["created_at"], createdAt)
	want(t, "file size", readThing(t, state, id)["size"], 20)

	// A new name replaces the thing.
	a.name = "beta"
	w.write(config(a))
	changes = w.plan()
	wantActions(t, changes, "cairntest_thing.a", "delete", "create")
	w.ok("apply", "tfplan")
	out = w.outputs()
	newID := out["id"].(string)
	if newID == id || !hexID.MatchString(newID) {
		t.Errorf("id after replacement = %q (was %q)", newID, id)
	}
	want(t, "revision after replacement", out["revision"], 1)
	want(t, "thing files after replacement", thingFiles(t, state), []string{"thing-" + newID + ".json"})
	id = newID

	// Import: forget a thing, import it by id, and find nothing to change.
	b := thingConfig{label: "b", name: "imported", size: 5, settings: v6}
	w.write(config(a, b))
	w.ok("apply", "-auto-approve")
	bID := w.resources()["cairntest_thing.b"].Values["id"].(string)
	w.ok("state", "rm", "cairntest_thing.b")
	w.ok("import", "cairntest_thing.b", bID)
	want(t, "plan exit code after import", w.planExit(), 0)
	want(t, "imported revision", w.resources()["cairntest_thing.b"].Values["revision"], 1)
	w.ok("state", "rm", "cairntest_thing.b")
	w.fails([]string{"Cannot import non-existent remote object"}, "import", "cairntest_thing.b", "0123456789abcdef")
	w.ok("import", "cairntest_thing.b", bID)

	// Drift: the thing's file is gone, so refresh drops it and the plan creates it again.
	if err := os.Remove(filepath.Join(state, "thing-"+bID+".json")); err != nil {
		t.Fatal(err)
	}
	changes = w.plan()
	wantActions(t, changes, "cairntest_thing.b", "create")
	w.ok("apply", "tfplan")
	if got := w.resources()["cairntest_thing.b"].Values["id"]; got == bID {
		t.Errorf("recreated thing kept id %v", got)
	}
	want(t, "things", len(thingFiles(t, state)), 2)

	// Warnings at validation, plan and apply.
	a.failOn, a.size = "warn", 150
	w.write(config(a, b))
	// -json, as the human view folds similar warnings together.
	diags := diagnostics(t, w.ok("apply", "-auto-approve", "-json"))
	for _, s := range []string{
		"warning: size is large: size is 150",
		`warning: cairntest: requested warning: fail_on = "warn": a warning from the plan of thing "beta"`,
		`warning: cairntest: requested warning: fail_on = "warn": a warning from the update of thing "beta"`,
	} {
		if !slices.ContainsFunc(diags, func(d string) bool { return strings.HasPrefix(d, s) }) {
			t.Errorf("apply diagnostics lack %q: %q", s, diags)
		}
	}

	// A failed update keeps the prior state.
	a.failOn, a.size = "update", 40
	w.write(config(a, b))
	w.fails([]string{"cairntest: forced failure", `update of thing "beta"`}, "apply", "-auto-approve")
	res = w.resources()["cairntest_thing.a"].Values
	want(t, "size after failed update", res["size"], 150)
	want(t, "fail_on after failed update", res["fail_on"], "warn")

	// A failed create leaves nothing; a partial create leaves a tainted thing.
	c := thingConfig{label: "c", name: "doomed", size: 1, failOn: "create"}
	d := thingConfig{label: "d", name: "partial", size: 1, failOn: "create_partial"}
	a.failOn, a.size = "delete", 40
	w.write(config(a, b, c, d))
	w.fails([]string{"cairntest: forced failure", `create of thing "doomed"`, `create of thing "partial"`}, "apply", "-auto-approve")
	rs := w.resources()
	if _, ok := rs["cairntest_thing.c"]; ok {
		t.Error("failed create left cairntest_thing.c in state")
	}
	if !rs["cairntest_thing.d"].Tainted {
		t.Errorf("cairntest_thing.d not tainted: %+v", rs["cairntest_thing.d"])
	}
	want(t, "size with fail_on delete", rs["cairntest_thing.a"].Values["size"], 40)
	want(t, "things", len(thingFiles(t, state)), 3)

	// A failed delete keeps the thing: destroy fails until fail_on is cleared.
	w.write(config(a, b))
	w.ok("apply", "-auto-approve") // deletes the tainted d
	w.fails([]string{"cairntest: forced failure", `delete of thing "beta"`}, "destroy", "-auto-approve")
	if _, ok := w.resources()["cairntest_thing.a"]; !ok {
		t.Error("failed delete removed cairntest_thing.a from state")
	}
	a.failOn = ""
	w.write(config(a, b))
	w.ok("apply", "-auto-approve")

	// Destroy removes every thing.
	w.ok("destroy", "-auto-approve")
	if rs := w.resources(); len(rs) != 0 {
		t.Errorf("state after destroy: %v", rs)
	}
	want(t, "thing files after destroy", len(thingFiles(t, state)), 0)
}

func TestTerraformDiagnostics(t *testing.T) {
	t.Parallel()
	for _, protocol := range []int{5, 6} {
		t.Run(fmt.Sprint("protocol", protocol), func(t *testing.T) {
			w := newTF(t, protocol)
			bad := header("") + `
resource "cairntest_thing" "x" {
  name = "x"
  size = 500
  rule {
    port = 70000
  }
}
`
			w.write(bad)
			w.ok("init")
			out := w.fails([]string{"Invalid Attribute Value", "65535", "size is large"}, "validate")
			if !strings.Contains(out, "port = 70000") {
				t.Errorf("the port error does not point at the attribute:\n%s", out)
			}

			// The state directory defaults to $CAIRNTEST_STATE_DIR.
			state := t.TempDir()
			w.env = append(w.env, "CAIRNTEST_STATE_DIR="+state)
			w.write(header("") + thingConfig{label: "x", name: "x", size: 1}.hcl())
			w.ok("apply", "-auto-approve")
			want(t, "things in $CAIRNTEST_STATE_DIR", len(thingFiles(t, state)), 1)
			w.ok("destroy", "-auto-approve")
			want(t, "things after destroy", len(thingFiles(t, state)), 0)

			// A missing thing is an error from the data source.
			w.write(header("") + "data \"cairntest_thing\" \"gone\" {\n  id = \"0123456789abcdef\"\n}\n")
			w.fails([]string{"cairntest: thing not found"}, "plan")

			// Configure fails when asked to.
			w.write(header("  fail_configure = \"boom from configure\"\n") + "data \"cairntest_echo\" \"e\" {\n  input = \"x\"\n}\n")
			w.fails([]string{"boom from configure"}, "plan")
		})
	}
}
