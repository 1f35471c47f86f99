package test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/cairn-dev/cairn/kube/test/widgetcontroller"
)

// cairn runs the cairn CLI against the server as user and returns its combined output.
func (s *cairnServer) cairn(token string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(bins, "cairn"), append(args, "--server", s.url, "--token", token)...)
	cmd.Dir = s.dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// startController runs the widget controller as admin until the test ends.
func (s *cairnServer) startController(delay time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- widgetcontroller.Run(ctx, s.restConfig("admin"), nil, delay) }()
	select {
	case err := <-done:
		s.t.Fatalf("the widget controller did not start: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	s.t.Cleanup(func() { cancel(); <-done })
}

// crdManifest is widgetCRD as a value to embed in templates.
func crdManifest(t *testing.T) map[string]any {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(widgetCRD), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func widgetManifest(name, ns string, size int, tags ...any) map[string]any {
	spec := map[string]any{"color": "red", "size": size}
	if len(tags) > 0 {
		spec["tags"] = tags
	}
	return map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec}
}

// cfnStack is a CloudFormation-dialect template: the CRD, n widgets that wait for it, and a
// consumer whose spec reads the first widget's status.endpoint.
func cfnStack(t *testing.T, ns string, n int, extra map[string]any) string {
	res := map[string]any{"WidgetCRD": map[string]any{"Type": "Cairn::Kubernetes::Object",
		"Properties": map[string]any{"Manifest": crdManifest(t)}}}
	for i := range n {
		props := map[string]any{"Manifest": widgetManifest(fmt.Sprintf("w%03d", i), ns, i%10), "Timeout": 120}
		for k, v := range extra {
			props[k] = v
		}
		res[fmt.Sprintf("W%03d", i)] = map[string]any{"Type": "Cairn::Kubernetes::Object", "DependsOn": "WidgetCRD", "Properties": props}
	}
	tmpl := map[string]any{"AWSTemplateFormatVersion": "2010-09-09", "Resources": res}
	if n > 0 {
		consumer := map[string]any{"Manifest": widgetManifest("consumer", ns, 2, map[string]any{"Fn::GetAtt": "W000.status.endpoint"})}
		for k, v := range extra {
			consumer[k] = v
		}
		res["Consumer"] = map[string]any{"Type": "Cairn::Kubernetes::Object", "Properties": consumer}
		tmpl["Outputs"] = map[string]any{"Endpoint": map[string]any{"Value": map[string]any{"Fn::GetAtt": "W000.status.endpoint"}}}
	}
	b, err := json.MarshalIndent(tmpl, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCloudFormationStack deploys a CRD and 100 widgets as a CloudFormation-dialect stack of
// a tenant: cairn waits for the test controller to make each Ready, reads a status field
// into a dependent object and an output, and the delete removes everything, widgets first
// (their finalizers run) and the CRD last.
func TestCloudFormationStack(t *testing.T) {
	requireKubectl(t)
	s := startServer(t)
	s.startController(500 * time.Millisecond)
	file := filepath.Join(s.dir, "kube.json")
	if err := os.WriteFile(file, []byte(cfnStack(t, "alpha-ns", 100, nil)), 0o600); err != nil {
		t.Fatal(err)
	}
	// The CRD is cluster-scoped: the admin deploys it (a tenant may not make CRDs).
	s.deployStack(file, "kubes", "alpha-ns")
	ready := s.kubectl("admin", "get", "widgets", "-n", "alpha-ns", "-o", "jsonpath={range .items[*]}{.status.conditions[0].status}{\"\\n\"}{end}")
	if c := strings.Count(ready, "True"); c != 101 {
		t.Fatalf("want 101 Ready widgets, got %d", c)
	}
	if mf := s.kubectl("admin", "get", "widget", "w001", "-n", "alpha-ns", "--show-managed-fields", "-o", "jsonpath={.metadata.managedFields[*].manager}"); !strings.Contains(mf, "cairn") {
		t.Fatalf("objects must be applied by the field manager cairn, managers: %s", mf)
	}

	s.deleteStack("kubes")
}

// TestFailedCondition: a Stalled condition from the controller fails the deploy step with the
// condition's message.
func TestFailedCondition(t *testing.T) {
	requireKubectl(t)
	s := startServer(t)
	s.startController(0)
	tmpl := cfnStack(t, "alpha-ns", 0, nil)
	tmpl = strings.Replace(tmpl, `"Resources": {`, `"Resources": {
  "Unlucky": {"Type": "Cairn::Kubernetes::Object", "DependsOn": "WidgetCRD", "Properties": {"Timeout": "60s", "Manifest":
   {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "unlucky", "namespace": "alpha-ns"}, "spec": {"size": 13}}}},`, 1)
	file := filepath.Join(s.dir, "kube.json")
	if err := os.WriteFile(file, []byte(tmpl), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := s.cairn(s.adminTok, "deploy", "-f", file, "--stack", "unlucky", "--yes", "--disable-rollback")
	if err == nil || !strings.Contains(out, "size 13 is unlucky") {
		t.Fatalf("deploy must fail with the Stalled condition's message, got %v:\n%s", err, out)
	}
}

// TestTenantStacks: a tenant's stack acts on cairn's kube API as the tenant: its own
// namespace works, another tenant's namespace and CRDs are refused, and a kubeconfig of its
// making may not reach the server's loopback.
func TestTenantStacks(t *testing.T) {
	requireKubectl(t)
	s := startServer(t)
	s.apply("admin", widgetCRD)
	s.waitEstablished("widgets.example.com")
	s.apply("beta", widget("b1", "beta-ns", "red", 1)) // beta owns beta-ns

	deploy := func(stack, tmpl string, params ...string) (string, error) {
		file := filepath.Join(s.dir, stack+".json")
		if err := os.WriteFile(file, []byte(tmpl), 0o600); err != nil {
			t.Fatal(err)
		}
		return s.cairn(s.tenants["alpha"], append([]string{"deploy", "-f", file, "--stack", stack, "--yes"}, params...)...)
	}
	object := func(name, ns, extra string) string {
		return `{"Resources": {"W": {"Type": "Cairn::Kubernetes::Object", "Properties": {` + extra + `"Wait": false, "Manifest":
  {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "` + name + `", "namespace": "` + ns + `"}, "spec": {"size": 1}}}}}}`
	}
	if out, err := deploy("own", object("a1", "alpha-ns", "")); err != nil {
		t.Fatalf("a tenant's stack in its own namespace: %v\n%s", err, out)
	}
	if got := s.jsonpath("alpha", "{.metadata.name}", "widget", "a1", "-n", "alpha-ns"); got != "a1" {
		t.Fatalf("a1 not made: %q", got)
	}
	if out, err := deploy("theirs", object("a2", "beta-ns", "")); err == nil || !strings.Contains(out, `namespace \"beta-ns\" is not tenant \"alpha\"'s`) && !strings.Contains(out, `namespace "beta-ns" is not tenant "alpha"'s`) {
		t.Fatalf("a tenant's stack must not write into another tenant's namespace, got %v:\n%s", err, out)
	}
	crd := `{"Resources": {"C": {"Type": "Cairn::Kubernetes::Object", "Properties": {"Manifest": ` + strings.TrimSpace(mustJSON(t, crdManifest(t))) + `}}}}`
	if out, err := deploy("crd", strings.Replace(crd, "widgets.example.com", "gadgets.example.com", 1)); err == nil || !strings.Contains(out, "forbidden") {
		t.Fatalf("a tenant's stack must not make CRDs, got %v:\n%s", err, out)
	}
	kc, err := os.ReadFile(s.kubeconfig("alpha", s.tenants["alpha"]))
	if err != nil {
		t.Fatal(err)
	}
	out, err := deploy("loopback", `{"Parameters": {"K": {"Type": "String", "NoEcho": true}}, `+strings.TrimPrefix(object("a3", "alpha-ns", `"Kubeconfig": {"Ref": "K"}, `), "{"), "-p", "K="+string(kc))
	if err == nil || !strings.Contains(out, "may not reach 127.0.0.1") {
		t.Fatalf("a tenant's kubeconfig must not reach the server's loopback, got %v:\n%s", err, out)
	}
	if strings.Contains(out, s.tenants["alpha"]) {
		t.Fatalf("the kubeconfig's token leaked into the output:\n%s", out)
	}
	// A kubeconfig may not run a command or read a file on the server.
	marker := filepath.Join(s.dir, "exec-ran")
	execKC := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://192.0.2.1:6443\"}}]\n" +
		"users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: sh, args: [-c, \"env > " + marker + "\"]}}}]\n" +
		"contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	fileKC := strings.Replace(execKC, `{exec: {apiVersion: client.authentication.k8s.io/v1, command: sh, args: [-c, "env > `+marker+`"]}}`, `{tokenFile: /etc/hostname}`, 1)
	for name, kc := range map[string]string{"exec": execKC, "file": fileKC} {
		out, err := deploy("kc-"+name, `{"Parameters": {"K": {"Type": "String", "NoEcho": true}}, `+strings.TrimPrefix(object("a4", "alpha-ns", `"Kubeconfig": {"Ref": "K"}, `), "{"), "-p", "K="+kc)
		if err == nil || !strings.Contains(out, "not allowed in a tenant's stack") {
			t.Fatalf("a tenant's kubeconfig with %s must be refused, got %v:\n%s", name, err, out)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a tenant's kubeconfig ran a command on the server")
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// deployStack deploys path as stack with the admin token, logs how long it took, and checks
// that the consumer in ns holds widget 0's status.endpoint, as the stack's output does.
func (s *cairnServer) deployStack(path, stack, ns string, args ...string) {
	s.t.Helper()
	start := time.Now()
	out, err := s.cairn(s.adminTok, append([]string{"deploy", "-f", path, "--stack", stack, "--yes"}, args...)...)
	if err != nil {
		s.t.Fatalf("deploy: %v\n%s", err, out)
	}
	s.t.Logf("deployed %s in %s", stack, time.Since(start).Round(time.Millisecond))
	want := "https://w000." + ns + ".widgets.example"
	if got := s.jsonpath("admin", "{.spec.tags[0]}", "widget", "consumer", "-n", ns); got != want {
		s.t.Fatalf("the consumer's spec must hold widget 0's status.endpoint %q, got %q", want, got)
	}
	if out, err := s.cairn(s.adminTok, "outputs", "--stack", stack); err != nil || !strings.Contains(out, want) {
		s.t.Fatalf("outputs: want %s, got %v:\n%s", want, err, out)
	}
}

// deleteStack deletes stack with the admin token and checks that the widgets' CRD is gone.
func (s *cairnServer) deleteStack(stack string) {
	s.t.Helper()
	if out, err := s.cairn(s.adminTok, "delete", "--stack", stack, "--yes"); err != nil {
		s.t.Fatalf("delete: %v\n%s", err, out)
	}
	if out, err := s.kubectlErr("admin", "", "get", "crd", "widgets.example.com"); err == nil || !strings.Contains(out, "NotFound") {
		s.t.Fatalf("the CRD must be gone after the delete, got %v:\n%s", err, out)
	}
}
