package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/test/providerbin"
)

// providersRC puts the time provider and the cairntest provider serving protocol (5 or 6) in
// a mirror of their own and returns a terraform CLI configuration that installs from it only.
// cairn and terraform both read it through TF_CLI_CONFIG_FILE, so they run the same binaries.
func providersRC(t *testing.T, protocol int) string {
	t.Helper()
	mirror := providerbin.Mirror(t,
		providerbin.Package{Source: "registry.terraform.io/hashicorp/time", Version: providerbin.TimeVersion, Binary: providerbin.Time(t)},
		providerbin.Package{Source: "registry.terraform.io/cairn-dev/cairntest", Version: providerbin.CairntestVersion,
			Binary: providerbin.Cairntest(t, protocol)})
	return providerbin.CLIConfig(t, mirror)
}

// writeConfig writes main.tf into dir (created when missing), replacing what was there.
func writeConfig(t *testing.T, dir, src string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// twins is one configuration written twice under a temporary directory, for terraform and for
// cairn, each tool with a cairntest state directory of its own; terraform init has run.
type twins struct {
	tf                *tfCLI
	c                 *cairnCLI
	tfDir, cDir       string // the two copies of the configuration
	tfThings, cThings string // the cairntest state directories
}

func newTwins(t *testing.T, rc, src string) twins {
	t.Helper()
	root := t.TempDir()
	w := twins{tfDir: filepath.Join(root, "tf"), cDir: filepath.Join(root, "cairn"),
		tfThings: filepath.Join(root, "tf-things"), cThings: filepath.Join(root, "cairn-things")}
	writeConfig(t, w.tfDir, src)
	writeConfig(t, w.cDir, src)
	w.tf = newTFCLI(t, rc, w.tfDir, w.tfThings)
	w.c = newCairnCLI(t, rc, w.cThings)
	w.tf.run("init", "-input=false")
	return w
}

// result is what a command printed and whether it succeeded.
type result struct {
	stdout, stderr string
	err            error
}

func (r result) all() string { return r.stdout + r.stderr }

// execIn runs name with args in dir (when not empty) with env added to the test's
// environment. Every command gets its environment this way, never through t.Setenv, so
// tests can run in parallel.
func execIn(dir string, env []string, name string, args ...string) result {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return result{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// cairnCLI runs the cairn binary in-process mode on a state directory of its own, with the
// providers of a CLI configuration and a cairntest state directory.
type cairnCLI struct {
	t   *testing.T
	bin string
	dir string // cairn's --dir
	env []string
}

func newCairnCLI(t *testing.T, rc, thingDir string) *cairnCLI {
	t.Helper()
	bin, err := buildCairn()
	if err != nil {
		t.Fatal(err)
	}
	return &cairnCLI{t: t, bin: bin, dir: filepath.Join(t.TempDir(), "cairn"),
		env: []string{"TF_CLI_CONFIG_FILE=" + rc, "CAIRNTEST_STATE_DIR=" + thingDir, "TF_LOG=", "CAIRN_SERVER="}}
}

// try runs cairn with args and returns what happened.
func (c *cairnCLI) try(args ...string) result {
	return execIn("", c.env, c.bin, append(args, "--dir", c.dir)...)
}

// run runs cairn with args and fails the test when it fails; it returns stdout.
func (c *cairnCLI) run(args ...string) string {
	c.t.Helper()
	r := c.try(args...)
	if r.err != nil {
		c.t.Fatalf("cairn %s: %v\n%s", strings.Join(args, " "), r.err, r.all())
	}
	return r.stdout
}

// describe returns the stack as `cairn describe -o json` prints it.
func (c *cairnCLI) describe(stack string) api.Stack {
	c.t.Helper()
	var st api.Stack
	if err := json.Unmarshal([]byte(c.run("describe", "--stack", stack, "-o", "json")), &st); err != nil {
		c.t.Fatalf("describe %s: %v", stack, err)
	}
	return st
}

// attrs returns the attributes of the resource at addr of st, failing when it has none.
func attrs(t *testing.T, st api.Stack, addr string) map[string]any {
	t.Helper()
	for _, r := range st.Resources {
		if r.LogicalID == addr {
			m, ok := r.Attributes.(map[string]any)
			if !ok {
				t.Fatalf("%s of stack %s has no attributes: %#v", addr, st.Name, r.Attributes)
			}
			return m
		}
	}
	t.Fatalf("stack %s has no resource %s: %+v", st.Name, addr, st.Resources)
	return nil
}

// tfCLI runs the terraform CLI in one working directory.
type tfCLI struct {
	t   *testing.T
	bin string
	dir string
	env []string
}

func newTFCLI(t *testing.T, rc, dir, thingDir string) *tfCLI {
	t.Helper()
	return &tfCLI{t: t, bin: providerbin.Terraform(t), dir: dir,
		env: []string{"TF_CLI_CONFIG_FILE=" + rc, "CAIRNTEST_STATE_DIR=" + thingDir, "TF_IN_AUTOMATION=1",
			"TF_INPUT=0", "CHECKPOINT_DISABLE=1", "TF_LOG=", "TF_DATA_DIR=", "TF_WORKSPACE="}}
}

func (tf *tfCLI) try(args ...string) result {
	return execIn(tf.dir, tf.env, tf.bin, append(args, "-no-color")...)
}

func (tf *tfCLI) run(args ...string) string {
	tf.t.Helper()
	r := tf.try(args...)
	if r.err != nil {
		tf.t.Fatalf("terraform %s: %v\n%s", strings.Join(args, " "), r.err, r.all())
	}
	return r.stdout
}

// tfShow is the part of `terraform show -json` the parity tests read, for a state or a plan.
type tfShow struct {
	Values struct {
		RootModule struct {
			Resources []tfResource `json:"resources"`
		} `json:"root_module"`
	} `json:"values"`
	ResourceChanges []struct {
		Address string `json:"address"`
		Mode    string `json:"mode"`
		Change  struct {
			Actions []string `json:"actions"`
		} `json:"change"`
	} `json:"resource_changes"`
}

type tfResource struct {
	Address         string         `json:"address"`
	Mode            string         `json:"mode"`
	Values          map[string]any `json:"values"`
	SensitiveValues map[string]any `json:"sensitive_values"`
}

func (tf *tfCLI) show(args ...string) tfShow {
	tf.t.Helper()
	var s tfShow
	out := tf.run(append([]string{"show", "-json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		tf.t.Fatalf("terraform show -json: %v\n%s", err, out)
	}
	return s
}

// A located diagnostic: its summary and where it points.
type located struct {
	Summary string
	File    string
	Line    int
}

func (l located) String() string { return fmt.Sprintf("%s:%d: %s", l.File, l.Line, l.Summary) }

// tfDiagnostics reads the error diagnostics of `terraform ... -json` (one JSON object a line).
func tfDiagnostics(out string) []located {
	var ds []located
	for _, line := range strings.Split(out, "\n") {
		var m struct {
			Level      string `json:"@level"`
			Diagnostic *struct {
				Summary string `json:"summary"`
				Range   *struct {
					Filename string `json:"filename"`
					Start    struct {
						Line int `json:"line"`
					} `json:"start"`
				} `json:"range"`
			} `json:"diagnostic"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.Diagnostic == nil || m.Level != "error" {
			continue
		}
		d := located{Summary: m.Diagnostic.Summary}
		if r := m.Diagnostic.Range; r != nil {
			d.File, d.Line = r.Filename, r.Start.Line
		}
		ds = append(ds, d)
	}
	return ds
}

// cairnDiagLine matches a diagnostic as cairn's CLI prints it: "file:line:col: path: summary...".
var cairnDiagLine = regexp.MustCompile(`^([^:\s]+\.tf(?:\.json)?):(\d+)(?::\d+)?: (.*)$`)

// cairnDiagnostics finds the located error diagnostics in cairn's stderr; the summary is the
// rest of the line (path, summary and detail), which the caller searches.
func cairnDiagnostics(out string) []located {
	var ds []located
	for _, line := range strings.Split(out, "\n") {
		m := cairnDiagLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil || strings.Contains(m[3], ": warning: ") {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		ds = append(ds, located{Summary: m[3], File: m[1], Line: n})
	}
	return ds
}

// tfActions maps cairn's preview of one resource to terraform's plan actions. cairn's preview
// does not say in which order a replacement runs, so cbd (the resource has
// create_before_destroy) decides between terraform's two orders.
func tfActions(c api.Change, cbd bool) []string {
	switch {
	case c.Action == api.ActionAdd:
		return []string{"create"}
	case c.Action == api.ActionModify && c.Replacement == api.ReplaceTrue && cbd:
		return []string{"create", "delete"}
	case c.Action == api.ActionModify && c.Replacement == api.ReplaceTrue:
		return []string{"delete", "create"}
	case c.Action == api.ActionModify:
		return []string{"update"}
	case c.Action == api.ActionRemove:
		return []string{"delete"}
	case c.Action == api.ActionRead:
		return []string{"read"}
	case c.Action == api.ActionNoop || c.Action == "":
		return []string{"no-op"}
	}
	return []string{"unknown:" + c.Action + "/" + c.Replacement}
}

// masked replaces terraform's sensitive values (as sensitive_values marks them) with cairn's
// marker, so that a state from terraform compares with cairn's masked attributes.
func masked(v any, sensitive any) any {
	if sensitive == true {
		return api.SensitiveMarker
	}
	switch x := v.(type) {
	case map[string]any:
		s, _ := sensitive.(map[string]any)
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = masked(e, s[k])
		}
		return out
	case []any:
		s, _ := sensitive.([]any)
		out := make([]any, len(x))
		for i, e := range x {
			var se any
			if i < len(s) {
				se = s[i]
			}
			out[i] = masked(e, se)
		}
		return out
	}
	return v
}
