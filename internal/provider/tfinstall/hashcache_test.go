//go:build linux

package tfinstall

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/addr"
)

// TestHashCacheSeesChanges: a package hashed once is not read again, but a binary rewritten in
// place, even with its size and modification time put back, is hashed again, and a package
// that no longer matches the lock is refused as before.
func TestHashCacheSeesChanges(t *testing.T) {
	t.Setenv("CAIRN_PROVIDER_CACHE", t.TempDir())
	mirror := t.TempDir()
	dir := fakePackage(t, mirror, acmeSrc, "1.0.0", "")
	exe := filepath.Join(dir, "terraform-provider-widget_v1.0.0")
	want := h1(t, dir)
	if got, err := cachedHashDir(dir); err != nil || got != want {
		t.Fatalf("first cachedHashDir = %q, %v; want %q", got, err, want)
	}
	key, ok := packageIdentity(dir)
	if !ok {
		t.Fatal("packageIdentity: no identity for a plain file")
	}
	entry := filepath.Join(os.Getenv("CAIRN_PROVIDER_CACHE"), "hashes", key)
	if b, err := os.ReadFile(entry); err != nil || string(b) != want {
		t.Fatalf("cache entry = %q, %v; want %q", b, err, want)
	}
	// The entry is what a second call answers: planted, it is returned without hashing.
	const planted = "h1:planted"
	if err := os.WriteFile(entry, []byte(planted), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := cachedHashDir(dir); got != planted {
		t.Fatalf("second cachedHashDir = %q; want the cached %q", got, planted)
	}

	// Same size, same modification time, other bytes: the change time differs.
	info, err := os.Stat(exe)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(exe)
	tampered := []byte(strings.Replace(string(old), "1.0.0", "6.6.6", 1))
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := os.WriteFile(exe, tampered, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(exe, info.ModTime(), info.ModTime()); err != nil {
			t.Fatal(err)
		}
		if k, _ := packageIdentity(dir); k != key || time.Now().After(deadline) {
			break // a coarse clock may give the rewrite the old change time: write again
		}
	}
	if k, _ := packageIdentity(dir); k == key {
		t.Fatal("a file rewritten in place kept its identity")
	}
	got, err := cachedHashDir(dir)
	if now := h1(t, dir); err != nil || got != now {
		t.Fatalf("cachedHashDir after rewrite = %q, %v; want %q", got, err, now)
	}
	lock := &Lock{Providers: map[addr.Provider]LockedProvider{acmeSrc: {Version: "1.0.0", Hashes: []string{want}}}}
	_, _, err = NewInstaller(mirror).Resolve([]Requirement{{Source: acmeSrc}}, lock, false)
	if err == nil || !strings.Contains(err.Error(), "does not match the checksums") {
		t.Fatalf("Resolve of a rewritten package against the old lock: %v; want a checksum mismatch", err)
	}
}
