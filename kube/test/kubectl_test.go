package test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKubectlVerbs drives the real kubectl through what users do with a CRD: create it, wait
// for Established, apply objects client- and server-side (with the ownership migration), get
// with printer columns and -w, patch (merge, JSON; strategic refused), edit, explain, wait on
// a condition, delete with a finalizer, and add a version to the CRD.
func TestKubectlVerbs(t *testing.T) {
	requireKubectl(t)
	s := startServer(t)

	if out := s.kubectl("admin", "version"); !strings.Contains(out, "Server Version: v1.37") {
		t.Fatalf("kubectl version: want the server's version, got:\n%s", out)
	}
	s.apply("admin", widgetCRD)
	s.waitEstablished("widgets.example.com")
	if out := s.kubectl("admin", "api-resources", "--api-group=example.com"); !strings.Contains(out, "widgets") || !strings.Contains(out, "wg") {
		t.Fatalf("api-resources: want widgets with short name wg, got:\n%s", out)
	}
	// Legacy discovery (APIGroupList, plain JSON) lists the CRD's group too.
	if out := s.kubectl("admin", "get", "--raw", "/apis"); !strings.Contains(out, `"kind":"APIGroupList"`) || !strings.Contains(out, `"name":"example.com"`) {
		t.Fatalf("legacy /apis must list example.com, got:\n%s", out)
	}

	// Client-side apply: create, then a three-way merge.
	s.apply("alpha", widget("w1", "alpha-ns", "red", 3))
	obj := s.getJSON("alpha", "widget", "w1", "-n", "alpha-ns")
	if spec := obj["spec"].(map[string]any); spec["color"] != "red" || spec["size"] != float64(3) {
		t.Fatalf("applied widget: got spec %v", spec)
	}
	if _, ok := obj["metadata"].(map[string]any)["annotations"].(map[string]any)["kubectl.kubernetes.io/last-applied-configuration"]; !ok {
		t.Fatalf("client-side apply must leave last-applied-configuration; got %v", obj["metadata"])
	}
	s.apply("alpha", widget("w1", "alpha-ns", "green", 3))
	if got := s.jsonpath("alpha", "{.spec.color}", "widget", "w1", "-n", "alpha-ns"); got != "green" {
		t.Fatalf("apply update: color %q, want green", got)
	}
	// Defaults from the schema.
	s.apply("alpha", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w-default, namespace: alpha-ns}\nspec: {}\n")
	if got := s.jsonpath("alpha", "{.spec.color}/{.spec.size}", "widget", "w-default", "-n", "alpha-ns"); got != "blue/1" {
		t.Fatalf("defaults: got %q, want blue/1", got)
	}

	// Printer columns in kubectl get (the Table form).
	table := s.kubectl("alpha", "get", "widgets", "-n", "alpha-ns")
	for _, want := range []string{"NAME", "COLOR", "SIZE", "READY", "w1", "green"} {
		if !strings.Contains(table, want) {
			t.Fatalf("kubectl get: want %q in the table, got:\n%s", want, table)
		}
	}

	// get -w sees a change as a new row.
	watch := exec.Command("kubectl", "--kubeconfig", filepath.Join(s.dir, "alpha.kubeconfig"), "get", "widgets", "-n", "alpha-ns", "-w", "--request-timeout=30s")
	var watched lockedBuffer
	watch.Stdout = &watched
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() error {
		if !strings.Contains(watched.String(), "w1") {
			return fmt.Errorf("get -w printed no initial rows: %q", watched.String())
		}
		return nil
	})
	s.kubectl("alpha", "patch", "widget", "w1", "-n", "alpha-ns", "--type=merge", "-p", `{"spec":{"color":"red"}}`)
	eventually(t, 20*time.Second, func() error {
		if !strings.Contains(watched.String(), "red") {
			return fmt.Errorf("get -w did not show the patched row: %q", watched.String())
		}
		return nil
	})
	_ = watch.Process.Kill()
	_ = watch.Wait()

	// Patch: JSON patch; strategic merge is refused for custom resources.
	s.kubectl("alpha", "patch", "widget", "w1", "-n", "alpha-ns", "--type=json", "-p", `[{"op":"replace","path":"/spec/size","value":7}]`)
	if got := s.jsonpath("alpha", "{.spec.size}", "widget", "w1", "-n", "alpha-ns"); got != "7" {
		t.Fatalf("json patch: size %q, want 7", got)
	}
	out, err := s.kubectlErr("alpha", "", "patch", "widget", "w1", "-n", "alpha-ns", "--type=strategic", "-p", `{"spec":{"size":8}}`)
	if err == nil || !strings.Contains(out, "strategic-merge-patch+json is not supported") || !strings.Contains(out, "application/merge-patch+json") {
		t.Fatalf("strategic merge patch must be refused, got err %v:\n%s", err, out)
	}

	// Validation: enum, CEL rule, maxItems, all named by their paths.
	out, err = s.kubectlErr("alpha", widget("w-bad", "alpha-ns", "purple", 101)+"  tags: [a, b, c, d]\n", "apply", "-f", "-")
	for _, want := range []string{`spec.color: Unsupported value: "purple"`, "spec.tags: Too many: 4: must have at most 3 items"} {
		if err == nil || !strings.Contains(out, want) {
			t.Fatalf("invalid widget: want %q in the error, got err %v:\n%s", want, err, out)
		}
	}
	// CEL rules run once the schema holds (as in Kubernetes).
	out, err = s.kubectlErr("alpha", widget("w-bad", "alpha-ns", "red", 101), "apply", "-f", "-")
	if err == nil || !strings.Contains(out, "spec: Invalid value: size must be at most 100") {
		t.Fatalf("CEL rule: want its message with the path, got err %v:\n%s", err, out)
	}
	// Unknown fields: rejected under kubectl's default strict validation, with the path.
	out, err = s.kubectlErr("alpha", widget("w-bogus", "alpha-ns", "red", 1)+"  bogus: 1\n", "apply", "-f", "-")
	if err == nil || !strings.Contains(out, `unknown field "spec.bogus"`) {
		t.Fatalf("unknown field: want a strict decoding error, got err %v:\n%s", err, out)
	}

	// Server-side apply of an object applied client-side migrates its ownership to kubectl.
	s.apply("alpha", widget("w-mig", "alpha-ns", "red", 2))
	s.applyServerSide("alpha", widget("w-mig", "alpha-ns", "blue", 2))
	obj = s.getJSON("alpha", "widget", "w-mig", "-n", "alpha-ns", "--show-managed-fields")
	managers := map[string]string{}
	for _, mf := range obj["metadata"].(map[string]any)["managedFields"].([]any) {
		m := mf.(map[string]any)
		managers[m["manager"].(string)] = m["operation"].(string)
	}
	if managers["kubectl"] != "Apply" {
		t.Fatalf("server-side apply: want manager kubectl with Apply, got %v", managers)
	}
	if _, ok := managers["kubectl-client-side-apply"]; ok {
		t.Fatalf("server-side apply must migrate client-side ownership, managers still %v", managers)
	}
	if got := s.jsonpath("alpha", "{.spec.color}", "widget", "w-mig", "-n", "alpha-ns"); got != "blue" {
		t.Fatalf("server-side apply: color %q, want blue", got)
	}
	// A field another manager set by patch conflicts with an apply until it is forced.
	out, err = s.kubectlErr("alpha", widget("w1", "alpha-ns", "blue", 7), "apply", "--server-side", "-f", "-")
	if err == nil || !strings.Contains(out, `conflict with "kubectl-patch"`) || !strings.Contains(out, ".spec.color") {
		t.Fatalf("conflicting server-side apply: want a conflict on .spec.color, got err %v:\n%s", err, out)
	}
	if out, err := s.kubectlErr("alpha", widget("w1", "alpha-ns", "red", 7), "apply", "--server-side", "--force-conflicts", "-f", "-"); err != nil {
		t.Fatalf("forced server-side apply: %v\n%s", err, out)
	}
	if got := s.jsonpath("alpha", "{.spec.color}", "widget", "w1", "-n", "alpha-ns"); got != "red" {
		t.Fatalf("forced apply: color %q, want red", got)
	}

	// Edit through $KUBE_EDITOR.
	editor := filepath.Join(s.dir, "editor.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nsed -i 's/size: 7/size: 9/' \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	edit := exec.Command("kubectl", "--kubeconfig", filepath.Join(s.dir, "alpha.kubeconfig"), "edit", "widget", "w1", "-n", "alpha-ns")
	edit.Env = append(os.Environ(), "KUBE_EDITOR="+editor)
	if out, err := edit.CombinedOutput(); err != nil {
		t.Fatalf("kubectl edit: %v\n%s", err, out)
	}
	if got := s.jsonpath("alpha", "{.spec.size}", "widget", "w1", "-n", "alpha-ns"); got != "9" {
		t.Fatalf("edit: size %q, want 9", got)
	}

	// Explain reads the CRD's schema through OpenAPI.
	if out := s.kubectl("alpha", "explain", "widgets.spec.color"); !strings.Contains(out, "The widget's color.") {
		t.Fatalf("explain: want the field's description, got:\n%s", out)
	}

	// Wait on a condition written to the status subresource.
	s.kubectl("alpha", "patch", "widget", "w1", "-n", "alpha-ns", "--subresource=status", "--type=merge",
		"-p", `{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Done"}]}}`)
	s.kubectl("alpha", "wait", "--for=condition=Ready", "--timeout=30s", "widget/w1", "-n", "alpha-ns")
	if table := s.kubectl("alpha", "get", "widget", "w1", "-n", "alpha-ns"); !strings.Contains(table, "True") {
		t.Fatalf("the Ready column must show the condition, got:\n%s", table)
	}

	// Delete waits for finalizers: the object stays, marked, until its finalizer is removed.
	s.kubectl("alpha", "patch", "widget", "w1", "-n", "alpha-ns", "--type=merge", "-p", `{"metadata":{"finalizers":["example.com/cleanup"]}}`)
	s.kubectl("alpha", "delete", "widget", "w1", "-n", "alpha-ns", "--wait=false")
	if ts := s.jsonpath("alpha", "{.metadata.deletionTimestamp}", "widget", "w1", "-n", "alpha-ns"); ts == "" {
		t.Fatal("a widget with a finalizer must stay, with a deletionTimestamp")
	}
	s.kubectl("alpha", "patch", "widget", "w1", "-n", "alpha-ns", "--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`)
	s.kubectl("alpha", "wait", "--for=delete", "--timeout=30s", "widget/w1", "-n", "alpha-ns")

	// A CRD update that adds a version: objects are readable through both.
	crd2 := strings.Replace(widgetCRD, "  - name: v1\n", widgetCRDv2Version+"  - name: v1\n", 1)
	s.apply("admin", crd2)
	eventually(t, 30*time.Second, func() error {
		out, err := s.kubectlErr("alpha", "", "get", "widgets.v2.example.com", "w-default", "-n", "alpha-ns", "-o", "jsonpath={.apiVersion}")
		if err != nil || out != "example.com/v2" {
			return fmt.Errorf("get through v2: %v: %s", err, out)
		}
		return nil
	})

	// Deleting the CRD deletes its objects; a CRD made again starts empty.
	s.kubectl("admin", "delete", "crd", "widgets.example.com", "--timeout=60s")
	s.apply("admin", widgetCRD)
	s.waitEstablished("widgets.example.com")
	if out := s.kubectl("alpha", "get", "widgets.v1.example.com", "-n", "alpha-ns", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Fatalf("a re-created CRD must start empty, got:\n%s", out)
	}
}

// TestKubectlTenants checks that tenants are a boundary: each sees and writes only its own
// namespaces, and CRDs are the admin's.
func TestKubectlTenants(t *testing.T) {
	requireKubectl(t)
	s := startServer(t)
	s.apply("admin", widgetCRD)
	s.waitEstablished("widgets.example.com")

	s.apply("alpha", widget("a1", "alpha-ns", "red", 1))
	for _, args := range [][]string{
		{"get", "widget", "a1", "-n", "alpha-ns"},
		{"get", "widgets", "-n", "alpha-ns"},
		{"delete", "widget", "a1", "-n", "alpha-ns"},
		{"get", "widgets", "-A"},
	} {
		out, err := s.kubectlErr("beta", "", args...)
		if err == nil || !strings.Contains(out, "forbidden") {
			t.Fatalf("beta: kubectl %v must be forbidden, got err %v:\n%s", args, err, out)
		}
	}
	out, err := s.kubectlErr("beta", widget("b1", "alpha-ns", "red", 1), "apply", "-f", "-")
	if err == nil || !strings.Contains(out, "forbidden") {
		t.Fatalf("beta must not write into alpha's namespace, got err %v:\n%s", err, out)
	}
	s.apply("beta", widget("b1", "beta-ns", "red", 1))
	// A tenant may not act as another user.
	for _, as := range [][]string{{"--as", "cairn:tenant:beta"}, {"--as", "cairn:tenant:default", "--as-group", "system:masters"}} {
		out, err := s.kubectlErr("alpha", "", append(as, "get", "widgets", "-n", "beta-ns")...)
		if err == nil || !strings.Contains(out, "forbidden") {
			t.Fatalf("alpha impersonating %v must be forbidden, got err %v:\n%s", as, err, out)
		}
	}
	out, err = s.kubectlErr("alpha", strings.Replace(widgetCRD, "widgets.example.com", "gadgets.example.com", 1), "apply", "-f", "-")
	if err == nil || !strings.Contains(out, "forbidden") {
		t.Fatalf("a tenant must not create CRDs, got err %v:\n%s", err, out)
	}
	// Tenants read CRDs (type definitions, not data), and the admin reads everything.
	s.kubectl("alpha", "get", "crd", "widgets.example.com")
	if out := s.kubectl("admin", "get", "widgets", "-A"); !strings.Contains(out, "a1") || !strings.Contains(out, "b1") {
		t.Fatalf("admin get -A: want both tenants' widgets, got:\n%s", out)
	}
	// A wrong token is refused.
	admin, err := os.ReadFile(s.kubeconfig("admin", s.adminTok))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "nobody.kubeconfig"), []byte(strings.ReplaceAll(string(admin), s.adminTok, "not-a-token-0123456789")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = s.kubectlErr("nobody", "", "get", "widgets", "-n", "alpha-ns")
	if err == nil || !strings.Contains(out, "You must be logged in to the server") {
		t.Fatalf("a wrong token must be refused, got err %v:\n%s", err, out)
	}
}

func widget(name, ns, color string, size int) string {
	return fmt.Sprintf("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  color: %s\n  size: %d\n", name, ns, color, size)
}

func (s *cairnServer) apply(user, manifest string) {
	s.t.Helper()
	if out, err := s.kubectlErr(user, manifest, "apply", "-f", "-"); err != nil {
		s.t.Fatalf("kubectl apply: %v\n%s\n---\n%s", err, out, manifest)
	}
}

func (s *cairnServer) applyServerSide(user, manifest string) {
	s.t.Helper()
	if out, err := s.kubectlErr(user, manifest, "apply", "--server-side", "-f", "-"); err != nil {
		s.t.Fatalf("kubectl apply --server-side: %v\n%s", err, out)
	}
}

func (s *cairnServer) getJSON(user string, args ...string) map[string]any {
	s.t.Helper()
	out, err := s.kubectlErr(user, "", append([]string{"get", "-o", "json"}, args...)...)
	if err != nil {
		s.t.Fatalf("kubectl get: %v\n%s", err, out)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		s.t.Fatalf("kubectl get -o json: %v\n%s", err, out)
	}
	return obj
}

func (s *cairnServer) jsonpath(user, path string, args ...string) string {
	s.t.Helper()
	out, err := s.kubectlErr(user, "", append([]string{"get", "-o", "jsonpath=" + path}, args...)...)
	if err != nil {
		s.t.Fatalf("kubectl get -o jsonpath: %v\n%s", err, out)
	}
	return out
}

// waitEstablished waits with kubectl wait until the CRD is Established. kubectl 1.32 fails at
// once on an object without conditions yet (as against any kube-apiserver in the instant
// after a create), so the first attempts may fail.
func (s *cairnServer) waitEstablished(crd string) {
	s.t.Helper()
	eventually(s.t, 60*time.Second, func() error {
		out, err := s.kubectlErr("admin", "", "wait", "--for=condition=Established", "--timeout=30s", "crd/"+crd)
		if err != nil {
			return fmt.Errorf("kubectl wait: %v: %s", err, out)
		}
		return nil
	})
}
