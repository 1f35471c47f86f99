package app

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRememberedListener: the in-process cairn's address is stable per state directory, and
// when it is taken, what replaces it depends on whether answers may still be on their way.
func TestRememberedListener(t *testing.T) {
	listen := func(t *testing.T, dir string, running bool) (net.Listener, string) {
		t.Helper()
		var logs syncBuffer
		a := &App{log: slog.New(slog.NewTextHandler(&logs, nil))}
		ln, err := a.rememberedListener(context.Background(), dir, func(context.Context) (bool, error) { return running, nil })
		if err != nil {
			t.Fatalf("rememberedListener: %v", err)
		}
		t.Cleanup(func() { ln.Close() })
		return ln, logs.String()
	}
	remembered := func(t *testing.T, dir string) string {
		b, err := os.ReadFile(filepath.Join(dir, listenFile))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}

	t.Run("SameAddressNextTime", func(t *testing.T) {
		dir := t.TempDir()
		first, _ := listen(t, dir, false)
		addr := first.Addr().String()
		if got := remembered(t, dir); got != addr {
			t.Fatalf("remembered %q, want the address listened on, %q", got, addr)
		}
		if port := first.Addr().(*net.TCPAddr).Port; port < rememberedPortMin || port > rememberedPortMax {
			t.Errorf("picked port %d, want one in [%d, %d], below the ephemeral range", port, rememberedPortMin, rememberedPortMax)
		}
		first.Close() // the process ended
		next, _ := listen(t, dir, true)
		if next.Addr().String() != addr {
			t.Errorf("the next start listens on %s, want the remembered %s", next.Addr(), addr)
		}
	})
	t.Run("TakenWhileAnOperationRuns", func(t *testing.T) {
		dir := t.TempDir()
		holder, _ := listen(t, dir, false) // another cairn on the directory, still running
		ln, logs := listen(t, dir, true)
		if ln.Addr().String() == holder.Addr().String() || remembered(t, dir) != holder.Addr().String() {
			t.Errorf("listens on %s, remembers %s; want a port of its own, the remembered one kept for the answers awaited there",
				ln.Addr(), remembered(t, dir))
		}
		if !strings.Contains(logs, "is in use") || !strings.Contains(logs, ln.Addr().String()) {
			t.Errorf("the warning does not say what was chosen:\n%s", logs)
		}
	})
	t.Run("TakenWithNothingRunning", func(t *testing.T) {
		dir := t.TempDir()
		holder, _ := listen(t, dir, false)
		ln, logs := listen(t, dir, false)
		if ln.Addr().String() == holder.Addr().String() || remembered(t, dir) != ln.Addr().String() {
			t.Errorf("listens on %s, remembers %s; want a new address, remembered from now on", ln.Addr(), remembered(t, dir))
		}
		if !strings.Contains(logs, "remembers it instead") {
			t.Errorf("the warning does not say the new address is remembered:\n%s", logs)
		}
	})
	t.Run("NotALoopbackAddress", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, listenFile), []byte("0.0.0.0:80\n"), 0o600)
		a := &App{log: slog.New(slog.DiscardHandler)}
		_, err := a.rememberedListener(context.Background(), dir, func(context.Context) (bool, error) { return false, nil })
		if err == nil || !strings.Contains(err.Error(), "remove the file") {
			t.Errorf("a remembered 0.0.0.0:80: %v, want an error saying how to recover", err)
		}
	})
}
