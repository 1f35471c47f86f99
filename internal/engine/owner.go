package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// defaultOwner names this engine in operation leases as HOST:PID:RANDOM, so that an engine
// on the same host can tell that a lease's holder is a process that no longer exists.
func defaultOwner() string { return NewOwner() }

// NewOwner returns a fresh name for an engine in operation leases: HOST:PID:RANDOM, which
// OwnerAlive's default understands. HOST is the host name and, when it is not the first,
// the PID namespace: two containers with one host name (host networking) do not share
// process ids, so neither may judge the other's pids.
func NewOwner() string {
	return fmt.Sprintf("%s:%d:%s", hostID(), os.Getpid(), newID()[:8])
}

// hostID names the set of processes this one can see: the host name, with the PID
// namespace appended when it is not the initial one ("host/pid-4026532198").
func hostID() string {
	host, _ := os.Hostname()
	host = strings.ReplaceAll(host, ":", "_")
	ns, err := os.Readlink("/proc/self/ns/pid") // "pid:[4026531836]"
	if err != nil || ns == "pid:[4026531836]" { // the initial namespace's inode
		return host
	}
	return host + "/pid-" + strings.Trim(strings.TrimPrefix(ns, "pid:"), "[]")
}

// ownerAlive reports whether the engine named owner may still be running: false only when it
// is provably gone (a process of this host that no longer exists). Owners of other hosts, of
// another naming, or of this very process count as alive: their leases are waited out.
func ownerAlive(owner string) bool {
	parts := strings.Split(owner, ":")
	if len(parts) != 3 {
		return true
	}
	pid, err := strconv.Atoi(parts[1])
	if parts[0] != hostID() || err != nil || pid <= 0 || pid == os.Getpid() {
		return true
	}
	// Signal 0 checks existence. EPERM means it exists under another user; a recycled pid
	// looks alive too, and only costs waiting out the lease.
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// processRunsDir is the directory of this process's runs under runs: HOST-PID, so that a
// process starting later can tell that its owner is gone.
func processRunsDir(runs string) string {
	host, _ := os.Hostname()
	host = strings.NewReplacer("/", "_", string(os.PathSeparator), "_").Replace(host)
	return filepath.Join(runs, fmt.Sprintf("%s-%d", host, os.Getpid()))
}

// prepareRunsDir makes runs private and removes the run directories of this host's processes
// that no longer exist (killed in the middle of a run); those of live processes (another
// server, a CLI's in-process one over the same state) are left alone.
func prepareRunsDir(runs string) error {
	if err := os.MkdirAll(runs, 0o700); err != nil {
		return fmt.Errorf("cannot create the runs' directory: %w", err)
	}
	if err := os.Chmod(runs, 0o700); err != nil {
		return fmt.Errorf("cannot make the runs' directory private: %w", err)
	}
	entries, err := os.ReadDir(runs)
	if err != nil {
		return fmt.Errorf("cannot read the runs' directory: %w", err)
	}
	for _, de := range entries {
		i := strings.LastIndexByte(de.Name(), '-')
		if i <= 0 || !de.IsDir() {
			continue
		}
		if !ownerAlive(de.Name()[:i] + ":" + de.Name()[i+1:] + ":runs") {
			_ = os.RemoveAll(filepath.Join(runs, de.Name()))
		}
	}
	return nil
}

// makeRunDir makes a run's own directory under this process's directory in runs, or in the
// system's temporary directory when runs is empty.
func makeRunDir(runs string) (string, error) {
	if runs == "" {
		return os.MkdirTemp("", "cairn-run-")
	}
	parent := processRunsDir(runs)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", err
	}
	return os.MkdirTemp(parent, "run-")
}

// Owner names this engine in operation leases: the replica's identity.
func (e *Engine) Owner() string { return e.o.Owner }
