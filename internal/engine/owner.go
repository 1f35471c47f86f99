package engine

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// defaultOwner names this engine in operation leases as HOST:PID:RANDOM, so that an engine
// on the same host can tell that a lease's holder is a process that no longer exists.
func defaultOwner() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), newID()[:8])
}

// ownerAlive reports whether the engine named owner may still be running: false only when it
// is provably gone (a process of this host that no longer exists). Owners of other hosts, of
// another naming, or of this very process count as alive: their leases are waited out.
func ownerAlive(owner string) bool {
	parts := strings.Split(owner, ":")
	if len(parts) != 3 {
		return true
	}
	host, _ := os.Hostname()
	pid, err := strconv.Atoi(parts[1])
	if parts[0] != host || err != nil || pid <= 0 || pid == os.Getpid() {
		return true
	}
	// Signal 0 checks existence. EPERM means it exists under another user; a recycled pid
	// looks alive too, and only costs waiting out the lease.
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
