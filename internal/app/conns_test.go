package app

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// TestShutdownClosesFreshConnections: a connection that never sent a request (what a
// handler's HTTP client may leave behind) does not hold Shutdown for net/http's five seconds.
func TestShutdownClosesFreshConnections(t *testing.T) {
	a, err := Start(context.Background(), Config{Dir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(a.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	time.Sleep(50 * time.Millisecond) // let the server see it
	start := time.Now()
	if err := a.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Shutdown took %s with one connection that sent nothing (net/http waits 5 s for those)", took)
	}
}
