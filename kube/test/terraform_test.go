package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tfStack is a Terraform-language configuration: the CRD, n widgets by count that wait for
// it, and a consumer whose spec reads the first widget's status.endpoint; kubeconfig_file and
// kube_context choose the endpoint (unset: cairn's own kube API).
const tfStack = `terraform {
  required_providers {
    kubernetes = { source = "cairn-dev/kubernetes" }
  }
}

variable "n" { default = 100 }
variable "ns" { default = "tf-ns" }
variable "kubeconfig_file" { default = "" }
variable "kube_context" { default = null }

locals {
  kubeconfig = var.kubeconfig_file == "" ? null : file(var.kubeconfig_file)
}

resource "kubernetes_object" "crd" {
  manifest   = yamldecode(file("crd.yaml"))
  kubeconfig = local.kubeconfig
  context    = var.kube_context
}

resource "kubernetes_object" "widget" {
  count      = var.n
  depends_on = [kubernetes_object.crd]
  kubeconfig = local.kubeconfig
  context    = var.kube_context
  timeout    = "120s"
  manifest = {
    apiVersion = "example.com/v1"
    kind       = "Widget"
    metadata   = { name = format("w%03d", count.index), namespace = var.ns }
    spec       = { color = "green", size = count.index % 10 }
  }
}

resource "kubernetes_object" "consumer" {
  kubeconfig = local.kubeconfig
  context    = var.kube_context
  manifest = {
    apiVersion = "example.com/v1"
    kind       = "Widget"
    metadata   = { name = "consumer", namespace = var.ns }
    spec       = { size = 2, tags = [kubernetes_object.widget[0].status.endpoint] }
  }
}

output "endpoint" {
  value = kubernetes_object.widget[0].status.endpoint
}
`

func writeTFStack(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"main.tf": tfStack, "crd.yaml": widgetCRD} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTerraformStack is TestCloudFormationStack in the Terraform language.
func TestTerraformStack(t *testing.T) {
	requireKubectl(t)
	s := startServer(t)
	s.startController(500 * time.Millisecond)
	dir := filepath.Join(s.dir, "tf")
	writeTFStack(t, dir)
	s.deployStack(dir, "tfkubes", "tf-ns")
	// Drift is what a refresh reads back.
	s.kubectl("admin", "patch", "widget", "consumer", "-n", "tf-ns", "--type=merge", "-p", `{"spec":{"size":5}}`)
	out, err := s.cairn(s.adminTok, "refresh", "--stack", "tfkubes")
	if err != nil || !strings.Contains(out, "kubernetes_object.consumer") || !strings.Contains(out, "size") {
		t.Fatalf("refresh must show the consumer's drift in spec.size, got %v:\n%s", err, out)
	}
	// A rename previews as a replacement even while the manifest holds values not known until
	// apply (every widget changes, so widget[0]'s status, which the consumer reads, is unknown).
	renamed := strings.Replace(strings.Replace(tfStack, `color = "green"`, `color = "blue"`, 1), `name = "consumer"`, `name = "consumer2"`, 1)
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(renamed), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = s.cairn(s.adminTok, "preview", "-f", dir, "--stack", "tfkubes")
	if err != nil || !strings.Contains(out, "kubernetes_object.consumer must be replaced") {
		t.Fatalf("preview must replace the renamed consumer, got %v:\n%s", err, tail(out, 3000))
	}
	// Preview validates against the CRD's schema before anything is applied.
	bad := strings.Replace(tfStack, `color = "green"`, `color = "purple"`, 1)
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = s.cairn(s.adminTok, "preview", "-f", dir, "--stack", "tfkubes")
	if err == nil || !strings.Contains(out, `spec.color: Unsupported value: "purple"`) {
		t.Fatalf("preview must refuse the invalid color with its path, got %v:\n%s", err, out)
	}
	writeTFStack(t, dir)
	s.deleteStack("tfkubes")
}

// TestSecondEndpoint deploys the same stacks, in both dialects, through one cairn server to
// another, separate kube endpoint chosen by a kubeconfig context.
func TestSecondEndpoint(t *testing.T) {
	requireKubectl(t)
	first := startServer(t)
	second := startServer(t)
	second.startController(0)

	// One kubeconfig with both endpoints, as users keep them; the stacks pick "second".
	merged := exec.Command("kubectl", "config", "view", "--flatten")
	merged.Env = append(os.Environ(), "KUBECONFIG="+first.kubeconfig("admin", first.adminTok)+":"+renamed(t, second, "second"))
	kc, err := merged.Output()
	if err != nil {
		t.Fatalf("kubectl config view: %v: %s", err, stderrOf(err))
	}

	dir := filepath.Join(first.dir, "tf")
	writeTFStack(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "kube.yaml"), kc, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := first.cairn(first.adminTok, "deploy", "-f", dir, "--stack", "elsewhere", "--yes",
		"--var", "n=5", "--var", "kubeconfig_file=kube.yaml", "--var", "kube_context=second")
	if err != nil {
		t.Fatalf("deploy: %v\n%s", err, out)
	}
	if got := second.jsonpath("admin", "{.spec.tags[0]}", "widget", "consumer", "-n", "tf-ns"); got != "https://w000.tf-ns.widgets.example" {
		t.Fatalf("the second endpoint must hold the stack's objects, got %q", got)
	}
	if out, err := first.kubectlErr("admin", "", "get", "crd", "widgets.example.com"); err == nil {
		t.Fatalf("the first endpoint must hold nothing, got:\n%s", out)
	}

	// The CloudFormation dialect, with the kubeconfig as a NoEcho parameter, in another namespace.
	tmpl := cfnStack(t, "cfn-ns", 5, map[string]any{"Kubeconfig": map[string]any{"Ref": "Kubeconfig"}, "Context": "second"})
	tmpl = strings.Replace(tmpl, `"Resources": {`, `"Parameters": {"Kubeconfig": {"Type": "String", "NoEcho": true}},
 "Resources": {`, 1)
	tmpl = strings.Replace(tmpl, `"Manifest": {
    "apiVersion": "apiextensions.k8s.io/v1"`, `"Kubeconfig": {"Ref": "Kubeconfig"}, "Context": "second", "Manifest": {
    "apiVersion": "apiextensions.k8s.io/v1"`, 1)
	file := filepath.Join(first.dir, "kube.json")
	if err := os.WriteFile(file, []byte(tmpl), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = first.cairn(first.adminTok, "deploy", "-f", file, "--stack", "cfn-elsewhere", "--yes", "-p", "Kubeconfig="+string(kc))
	if err != nil {
		t.Fatalf("deploy: %v\n%s", err, out)
	}
	if got := second.jsonpath("admin", "{.spec.tags[0]}", "widget", "consumer", "-n", "cfn-ns"); got != "https://w000.cfn-ns.widgets.example" {
		t.Fatalf("the second endpoint must hold the CloudFormation stack's objects, got %q", got)
	}
	for _, stack := range []string{"cfn-elsewhere", "elsewhere"} {
		if out, err := first.cairn(first.adminTok, "delete", "--stack", stack, "--yes"); err != nil {
			t.Fatalf("delete %s: %v\n%s", stack, err, out)
		}
	}
	if out, err := second.kubectlErr("admin", "", "get", "crd", "widgets.example.com"); err == nil || !strings.Contains(out, "NotFound") {
		t.Fatalf("the CRD must be gone after the deletes, got %v:\n%s", err, out)
	}
}

// renamed is s's admin kubeconfig with its cluster, user and context called name.
func renamed(t *testing.T, s *cairnServer, name string) string {
	path := filepath.Join(s.dir, name+".kubeconfig")
	cmd := exec.Command(filepath.Join(bins, "cairn"), "kube", "kubeconfig", "--server", s.url, "--token", s.adminTok, "--context", name)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cairn kube kubeconfig: %v", err)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
