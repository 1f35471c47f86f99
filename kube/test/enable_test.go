package test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// providerMirror installs the real hashicorp time and random providers from the Go module
// proxy (cached under the user cache directory) and lays them out as a plugin directory.
func providerMirror(t *testing.T) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	mirror := t.TempDir()
	for _, p := range []struct{ typ, version, module, at string }{
		{"time", "0.14.2", "github.com/hashicorp/terraform-provider-time", "v0.14.2"},
		{"random", "3.9.0", "github.com/terraform-providers/terraform-provider-random", "v1.3.2-0.20260513075824-f8d869dc98d9"},
	} {
		bin := filepath.Join(base, "cairn-test", "kube-providers", p.typ+"-"+p.version)
		exe := filepath.Join(bin, "terraform-provider-"+p.typ)
		if _, err := os.Stat(exe); err != nil {
			cmd := exec.Command("go", "install", p.module+"@"+p.at)
			cmd.Env = append(os.Environ(), "GOBIN="+bin, "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("go install %s: %v\n%s", p.module, err, out)
			}
		}
		d := filepath.Join(mirror, "registry.terraform.io", "hashicorp", p.typ, p.version, runtime.GOOS+"_"+runtime.GOARCH)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(exe, filepath.Join(d, "terraform-provider-"+p.typ+"_v"+p.version)); err != nil {
			t.Fatal(err)
		}
	}
	return mirror
}

// TestKubeEnable offers resource types of the real time and random providers as CRDs, applies
// objects of them with kubectl as a tenant, sees them Ready with the provider's attributes in
// kubectl get, checks the stack cairn made against a cairn deploy of the same resources, and
// deletes them with kubectl.
func TestKubeEnable(t *testing.T) {
	requireKubectl(t)
	mirror := providerMirror(t)
	s := startServer(t, "--plugin-dir", mirror)

	for _, args := range [][]string{
		{"kube", "enable", "hashicorp/random", "random_pet", "random_string"},
		{"kube", "enable", "hashicorp/time", "time_offset"},
	} {
		out, err := s.cairn(s.adminTok, args...)
		if err != nil {
			t.Fatalf("cairn %v: %v\n%s", args, err, out)
		}
	}
	for _, crd := range []string{"pets.random.hashicorp.tf.cairn.dev", "strings.random.hashicorp.tf.cairn.dev", "offsets.time.hashicorp.tf.cairn.dev"} {
		s.waitEstablished(crd)
	}
	if out, err := s.cairn(s.tenants["alpha"], "kube", "enable", "hashicorp/random", "random_id"); err == nil || !strings.Contains(out, "only the server's admin") {
		t.Fatalf("a tenant must not enable types, got %v:\n%s", err, out)
	}
	if out := s.kubectl("alpha", "explain", "pets.spec.length"); !strings.Contains(out, "length") {
		t.Fatalf("explain of a generated type:\n%s", out)
	}

	const objects = `apiVersion: random.hashicorp.tf.cairn.dev/v1alpha1
kind: Pet
metadata: {name: fido, namespace: alpha-ns}
spec: {length: 3, separator: "-", prefix: dog}
---
apiVersion: random.hashicorp.tf.cairn.dev/v1alpha1
kind: String
metadata: {name: token, namespace: alpha-ns}
spec: {length: 12, special: false}
---
apiVersion: time.hashicorp.tf.cairn.dev/v1alpha1
kind: Offset
metadata: {name: tomorrow, namespace: alpha-ns}
spec: {offset_days: 1}
`
	start := time.Now()
	if out, err := s.kubectlErr("alpha", objects, "apply", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	for _, obj := range []string{"pet/fido", "string/token", "offset/tomorrow"} {
		eventually(t, 120*time.Second, func() error {
			out, err := s.kubectlErr("alpha", "", "wait", "--for=condition=Ready", "--timeout=20s", obj, "-n", "alpha-ns")
			if err != nil {
				return fmt.Errorf("%s not Ready: %v: %s", obj, err, out)
			}
			return nil
		})
	}
	t.Logf("three objects deployed and Ready %s after kubectl apply", time.Since(start).Round(time.Millisecond))
	table := s.kubectl("alpha", "get", "pets", "-n", "alpha-ns")
	for _, want := range []string{"READY", "SYNCED", "ID", "LENGTH", "fido", "True", "dog-"} {
		if !strings.Contains(table, want) {
			t.Fatalf("kubectl get pets: want %q, got:\n%s", want, table)
		}
	}
	if got := s.jsonpath("alpha", "{.status.stack}", "pet", "fido", "-n", "alpha-ns"); got != "kube-alpha-ns" {
		t.Fatalf("status.stack = %q", got)
	}

	// The stack holds what a cairn deploy of the same resources holds.
	dir := filepath.Join(s.dir, "direct")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	tf := `terraform {
  required_providers {
    random = { source = "hashicorp/random", version = "= 3.9.0" }
    time   = { source = "hashicorp/time", version = "= 0.14.2" }
  }
}
resource "random_pet" "o_fido" {
  length    = 3
  separator = "-"
  prefix    = "dog"
}
resource "random_string" "o_token" {
  length  = 12
  special = false
}
resource "time_offset" "o_tomorrow" {
  offset_days = 1
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(tf), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := s.cairn(s.adminTok, "deploy", "-f", dir, "--stack", "direct", "--yes"); err != nil {
		t.Fatalf("deploy: %v\n%s", err, out)
	}
	viaKube, direct := s.stackShape("kube-alpha-ns"), s.stackShape("direct")
	if viaKube != direct {
		t.Fatalf("the namespace's stack differs from a cairn deploy of the same resources:\nkube:   %s\ndirect: %s", viaKube, direct)
	}

	if out, err := s.kubectlErr("alpha", "", "delete", "pet/fido", "string/token", "offset/tomorrow", "-n", "alpha-ns", "--timeout=120s"); err != nil {
		t.Fatalf("kubectl delete: %v\n%s", err, out)
	}
	eventually(t, 60*time.Second, func() error {
		out, _ := s.cairn(s.adminTok, "stacks")
		if strings.Contains(out, "kube-alpha-ns") {
			return fmt.Errorf("stack kube-alpha-ns still listed:\n%s", out)
		}
		return nil
	})
}

// stackShape is a stack's resources as "address: attribute names, input values", for
// comparing two stacks whose random values differ.
func (s *cairnServer) stackShape(stack string) string {
	s.t.Helper()
	out, err := s.cairn(s.adminTok, "describe", "--stack", stack, "-o", "json")
	if err != nil {
		s.t.Fatalf("describe %s: %v\n%s", stack, err, out)
	}
	var st struct {
		Resources []struct {
			LogicalID  string         `json:"logicalId"`
			Status     string         `json:"status"`
			Attributes map[string]any `json:"attributes"`
		} `json:"resources"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		s.t.Fatalf("describe %s -o json: %v\n%s", stack, err, out)
	}
	inputs := map[string]bool{"length": true, "separator": true, "prefix": true, "special": true, "offset_days": true}
	var lines []string
	for _, r := range st.Resources {
		var keys []string
		for k, v := range r.Attributes {
			if inputs[k] {
				k = fmt.Sprintf("%s=%v", k, v)
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		lines = append(lines, r.LogicalID+" "+r.Status+": "+strings.Join(keys, ","))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
