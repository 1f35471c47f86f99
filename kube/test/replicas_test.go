package test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
)

// databaseEnv names the PostgreSQL database the replica tests share (.ci/run starts one);
// without it they skip, unless CAIRN_REQUIRE_POSTGRES=1.
const databaseEnv = "CAIRN_KUBE_TEST_DATABASE"

// TestReplicasShareKube: two cairn replicas on one PostgreSQL database, each with its own
// cairn-kube, serve one Kubernetes API: a CRD made through one is served by the other, an
// object written through either is read through both, a namespace claimed through one is
// refused to another tenant through the other, and a viewer's token reads but cannot write.
func TestReplicasShareKube(t *testing.T) {
	requireKubectl(t)
	db := os.Getenv(databaseEnv)
	if db == "" {
		if os.Getenv("CAIRN_REQUIRE_POSTGRES") == "1" {
			t.Fatalf("%s is not set: .ci/run starts PostgreSQL and sets it", databaseEnv)
		}
		t.Skipf("no PostgreSQL: set %s", databaseEnv)
	}
	// Replicas share the database, so they share the key that seals it.
	t.Setenv("CAIRN_SECRETS_KEY", base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{5}, 32)))
	a := startServer(t, "--database", db)
	b := startServer(t, "--database", db)

	a.apply("admin", widgetCRD)
	b.waitEstablished("widgets.example.com")
	a.apply("alpha", widget("w1", "shared-ns", "red", 3))
	if got := b.jsonpath("alpha", "{.spec.color}", "widget", "w1", "-n", "shared-ns"); got != "red" {
		t.Fatalf("the object written through replica a, read through b: color %q, want red", got)
	}
	b.apply("alpha", widget("w2", "shared-ns", "green", 2))
	if out := a.kubectl("alpha", "get", "widgets", "-n", "shared-ns"); !strings.Contains(out, "w2") || !strings.Contains(out, "w1") {
		t.Fatalf("replica a's list: want w1 and w2, got:\n%s", out)
	}
	// alpha claimed shared-ns through a; beta is refused it through b.
	if out, err := b.kubectlErr("beta", "", "get", "widgets", "-n", "shared-ns"); err == nil || !strings.Contains(out, "is not tenant") {
		t.Fatalf("beta reading alpha's namespace through the other replica: %v\n%s", err, out)
	}

	// A viewer of alpha, made by the server's admin: reads, but cannot write.
	viewer := mintToken(t, a.url, a.adminTok, "alpha", "viewer")
	b.kubeconfig("alpha-viewer", viewer)
	if got := b.jsonpath("alpha-viewer", "{.spec.color}", "widget", "w1", "-n", "shared-ns"); got != "red" {
		t.Fatalf("a viewer's read: color %q, want red", got)
	}
	if out, err := b.kubectlErr("alpha-viewer", widget("w3", "shared-ns", "red", 1), "apply", "-f", "-"); err == nil || !strings.Contains(out, "may only read") {
		t.Fatalf("a viewer's apply: %v\n%s; want refused", err, out)
	}
}

// mintToken makes a token of tenant with role through cairn's API (POST /v1/tokens).
func mintToken(t *testing.T, url, admin, tenant, role string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"tenant": tenant, "role": role})
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/tokens", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Secret string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /v1/tokens: %d %v", resp.StatusCode, err)
	}
	return out.Secret
}
