package function

import (
	"errors"
	"os"
	"sync"
	"syscall"
	"time"
)

// outputPipe is the read end of a process's stdout or stderr, read into a lineWriter. Every
// read happens under mu, so drain can take mu and read what is left in the pipe itself: once
// it returns, all the process wrote before the call has been emitted. The worker drains when
// the process asks for its next invocation, so that a line printed just before asking is not
// read later and attributed to the next request.
type outputPipe struct {
	r    *os.File
	to   *lineWriter
	mu   sync.Mutex
	buf  []byte
	done chan struct{} // closed at end of file (or once r is closed)
}

// newOutputPipe returns the pipe and the write end to give the process; the caller closes
// the write end once the process has started.
func newOutputPipe(to *lineWriter) (*outputPipe, *os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	return &outputPipe{r: r, to: to, buf: make([]byte, 32<<10), done: make(chan struct{})}, w, nil
}

// readOnce reads what fd has without blocking and writes it on; more is false at end of
// file or on an error, again is true when nothing was there to read. Called with mu held.
func (p *outputPipe) readOnce(fd uintptr) (again, more bool) {
	n, err := syscall.Read(int(fd), p.buf)
	if n > 0 {
		_, _ = p.to.Write(p.buf[:n])
		return false, true
	}
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR) {
		return true, true
	}
	return false, false
}

// run copies the pipe into its lineWriter until end of file, waiting in the runtime's poller
// between reads.
func (p *outputPipe) run() {
	defer close(p.done)
	defer p.to.flush()
	rc, err := p.r.SyscallConn()
	if err != nil {
		return
	}
	for more := true; more; {
		if rc.Read(func(fd uintptr) bool {
			p.mu.Lock()
			defer p.mu.Unlock()
			again, m := p.readOnce(fd)
			more = m
			return !again
		}) != nil {
			return
		}
	}
}

// drain emits what is in the pipe now, and waits for a read in progress to be emitted.
func (p *outputPipe) drain() {
	rc, err := p.r.SyscallConn()
	if err != nil {
		return
	}
	// Control, not Read: run holds the file's read lock while it waits for data.
	_ = rc.Control(func(fd uintptr) {
		p.mu.Lock()
		defer p.mu.Unlock()
		for {
			if again, more := p.readOnce(fd); again || !more {
				return
			}
		}
	})
}

// finish waits for end of file, at most grace: a grandchild may hold the write end open
// after the process exited. Then the read end is closed.
func (p *outputPipe) finish(grace time.Duration) {
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.r.Close() // ends run's read
		<-p.done
	}
	_ = p.r.Close()
}
