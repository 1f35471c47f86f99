package kubeproc

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeKube writes a stand-in for cairn-kube: it prints the ready line with the address it was
// given, records its pid, and sleeps.
func fakeKube(t *testing.T) (bin, pids string) {
	dir := t.TempDir()
	pids = filepath.Join(dir, "pids")
	bin = filepath.Join(dir, "cairn-kube")
	script := "#!/bin/sh\necho $$ >> " + pids + "\necho \"cairn-kube: serving https://$2 cert /ca.pem\"\nexec sleep 300\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, pids
}

func lastPid(t *testing.T, pids string) int {
	b, _ := os.ReadFile(pids)
	lines := strings.Fields(string(b))
	if len(lines) == 0 {
		return 0
	}
	pid, _ := strconv.Atoi(lines[len(lines)-1])
	return pid
}

// TestSuperviseRestartsAndStops: a cairn-kube that dies is started again on the same
// address, and Stop ends it without waiting out a restart's backoff.
func TestSuperviseRestartsAndStops(t *testing.T) {
	bin, pids := fakeKube(t)
	p, err := Start(context.Background(), Config{Binary: bin, Listen: "127.0.0.1:7443", Dir: t.TempDir(), CairnURL: "http://x"})
	if err != nil {
		t.Fatal(err)
	}
	if p.URL() != "https://127.0.0.1:7443" || p.CertFile() != "/ca.pem" {
		t.Fatalf("URL %q, cert %q", p.URL(), p.CertFile())
	}
	first := lastPid(t, pids)
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for lastPid(t, pids) == first {
		if time.Now().After(deadline) {
			t.Fatal("cairn-kube was not restarted")
		}
		time.Sleep(50 * time.Millisecond)
	}
	second := lastPid(t, pids)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(second, 0); err == nil {
		t.Fatalf("the restarted cairn-kube (pid %d) still runs after Stop", second)
	}
}

// TestFindBinaryMissing says how to get cairn-kube.
func TestFindBinaryMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := FindBinary("")
	if err == nil || !strings.Contains(err.Error(), "go build -o DIR/cairn-kube ./kube/cmd/cairn-kube") {
		t.Fatalf("got %v", err)
	}
}
