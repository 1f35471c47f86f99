package tlsca

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEnsureServesTLSTrustedByCA(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	f, err := Ensure(dir, []string{"cairn.example", "[2001:db8::1]", "10.0.0.7"})
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	wantHosts := []string{"10.0.0.7", "127.0.0.1", "2001:db8::1", "::1", "cairn.example", "localhost"}
	if diff := cmp.Diff(wantHosts, f.Hosts); diff != "" {
		t.Errorf("Files.Hosts: -want +got:\n%s", diff)
	}
	modes := map[string]os.FileMode{}
	for _, p := range []string{f.CA, f.CAKey, f.Cert, f.CertKey} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatalf("Ensure did not write %s: %v", p, err)
		}
		modes[filepath.Base(p)] = st.Mode().Perm()
	}
	wantModes := map[string]os.FileMode{"ca.pem": 0o644, "ca-key.pem": 0o600, "server.pem": 0o644, "server-key.pem": 0o600}
	if diff := cmp.Diff(wantModes, modes); diff != "" {
		t.Errorf("file modes: -want +got:\n%s", diff)
	}

	cfg, err := f.TLSConfig()
	if err != nil {
		t.Fatalf("TLSConfig: %v", err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hello") }))
	srv.TLS = cfg
	srv.StartTLS()
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	pool, err := f.CertPool()
	if err != nil {
		t.Fatalf("CertPool: %v", err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer client.CloseIdleConnections()
	for _, host := range []string{"127.0.0.1", "localhost"} {
		url := "https://" + net.JoinHostPort(host, port) + "/"
		resp, err := client.Get(url)
		if err != nil {
			t.Errorf("GET %s with only ca.pem trusted: %v", url, err)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "hello" {
			t.Errorf("GET %s = %q, want hello", url, b)
		}
	}

	// A client that does not trust the CA is refused: the certificate really is the CA's.
	plain := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: nil}}}
	if _, err := plain.Get("https://" + net.JoinHostPort("127.0.0.1", port) + "/"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("GET without trusting the CA: err = %v, want a certificate error", err)
	}
}

func TestEnsureKeepsOrReissues(t *testing.T) {
	cases := map[string]struct {
		reason      string
		hosts2      []string
		tamper      func(t *testing.T, f Files)
		wantNewLeaf bool
	}{
		"SameHosts": {
			reason: "A second Ensure with the same hosts keeps every file.",
			hosts2: []string{"cairn.example"},
		},
		"SameHostsOtherSpelling": {
			reason: "Host order, case and IPv6 brackets do not matter.",
			hosts2: []string{"CAIRN.example", "[::1]", "localhost"},
		},
		"NewHost": {
			reason:      "A new host re-issues the server certificate from the same CA.",
			hosts2:      []string{"cairn.example", "203.0.113.9"},
			wantNewLeaf: true,
		},
		"FewerHosts": {
			reason:      "A dropped host re-issues the server certificate.",
			hosts2:      nil,
			wantNewLeaf: true,
		},
		"CorruptLeaf": {
			reason: "An unreadable server certificate is re-issued.",
			hosts2: []string{"cairn.example"},
			tamper: func(t *testing.T, f Files) {
				if err := os.WriteFile(f.Cert, []byte("garbage"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			wantNewLeaf: true,
		},
		"MissingLeafKey": {
			reason: "A missing server key re-issues the server certificate.",
			hosts2: []string{"cairn.example"},
			tamper: func(t *testing.T, f Files) {
				if err := os.Remove(f.CertKey); err != nil {
					t.Fatal(err)
				}
			},
			wantNewLeaf: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			f1, err := Ensure(dir, []string{"cairn.example"})
			if err != nil {
				t.Fatalf("first Ensure: %v", err)
			}
			before := readAll(t, f1)
			if tc.tamper != nil {
				tc.tamper(t, f1)
			}
			f2, err := Ensure(dir, tc.hosts2)
			if err != nil {
				t.Fatalf("%s\nsecond Ensure: %v", tc.reason, err)
			}
			after := readAll(t, f2)
			if after[CAFile] != before[CAFile] || after[CAKeyFile] != before[CAKeyFile] {
				t.Errorf("%s\nthe CA changed", tc.reason)
			}
			if gotNew := after[CertFile] != before[CertFile]; gotNew != tc.wantNewLeaf {
				t.Errorf("%s\nserver certificate re-issued = %v, want %v", tc.reason, gotNew, tc.wantNewLeaf)
			}
			pair, err := tls.LoadX509KeyPair(f2.Cert, f2.CertKey)
			if err != nil {
				t.Fatalf("%s\nthe server certificate does not load: %v", tc.reason, err)
			}
			if diff := cmp.Diff(f2.Hosts, hostsOf(pair.Leaf)); diff != "" {
				t.Errorf("%s\nhosts of the server certificate: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestEnsureRefusesHalfACA(t *testing.T) {
	dir := t.TempDir()
	f, err := Ensure(dir, nil)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if err := os.Remove(f.CAKey); err != nil {
		t.Fatal(err)
	}
	if _, err := Ensure(dir, nil); err == nil {
		t.Fatal("Ensure with ca.pem but no ca-key.pem succeeded; it must not replace a CA clients may trust")
	}
}

func readAll(t *testing.T, f Files) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range []string{f.CA, f.CAKey, f.Cert, f.CertKey} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = string(b)
	}
	return out
}
