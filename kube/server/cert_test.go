package server

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

// TestStaleCert: the serving certificate is made again near its end (the library's lasts a
// year) and when a host was added since.
func TestStaleCert(t *testing.T) {
	crt, _, err := certutil.GenerateSelfSignedCertKey("localhost", []net.IP{net.ParseIP("127.0.0.1")}, []string{"kube.example"})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "apiserver.crt")
	if err := os.WriteFile(file, crt, 0o600); err != nil {
		t.Fatal(err)
	}
	ips := []net.IP{net.ParseIP("127.0.0.1")}
	now := time.Now()
	if staleCert(file, []string{"localhost", "kube.example"}, ips, now) {
		t.Fatal("a fresh certificate for the same hosts is not stale")
	}
	if !staleCert(file, []string{"localhost", "kube.example", "new.example"}, ips, now) {
		t.Fatal("a certificate without an added host is stale")
	}
	if !staleCert(file, []string{"localhost"}, []net.IP{net.ParseIP("10.0.0.1")}, now) {
		t.Fatal("a certificate without an added address is stale")
	}
	if !staleCert(file, []string{"localhost"}, ips, now.Add(340*24*time.Hour)) {
		t.Fatal("a certificate within 30 days of its end is stale")
	}
	if staleCert(filepath.Join(t.TempDir(), "none.crt"), nil, nil, now) {
		t.Fatal("a missing certificate is made by the library, not stale")
	}
}
