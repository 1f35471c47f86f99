package app

import (
	"context"
	"errors"
	"fmt"
	"github.com/cairn-dev/cairn/internal/atomicfile"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// listenFile is the file under the state directory that remembers the in-process cairn's
// loopback address (Config.RememberListen).
const listenFile = "listen"

// Ports picked for a state directory come from below Linux's ephemeral range (32768-60999),
// so that an outgoing connection's local port never takes one while no cairn listens on it.
const (
	rememberedPortMin = 20000
	rememberedPortMax = 32767
)

// rememberedListener opens the in-process cairn's HTTP listener on the loopback address
// remembered in dir/listen, picking and remembering one the first time. Every response URL
// carries this address, so a handler's answer to a request of a run that died (kill -9, a
// closed terminal) reaches the next run on the same directory, which resumes the operation.
//
// When the remembered address is taken (another cairn on this directory, or another program)
// and no operation is running on the directory, a new address is picked and remembered: no
// answer can be on its way to the old one. When an operation is running, this run listens on a
// port of the system's choice for itself and leaves the remembered address alone, since
// answers to that operation's requests may still come to it. Either way a warning says what
// was chosen.
func (a *App) rememberedListener(ctx context.Context, dir string, running func(context.Context) (bool, error)) (net.Listener, error) {
	path := filepath.Join(dir, listenFile)
	for range 3 { // a concurrent first start may write the file between our read and create
		addr, err := readRemembered(path)
		if err != nil {
			return nil, err
		}
		if addr == "" {
			ln, err := listenNew()
			if err != nil {
				return nil, err
			}
			err = createRemembered(path, ln.Addr().String())
			if errors.Is(err, fs.ErrExist) {
				ln.Close()
				continue // another cairn remembered one first: use that
			}
			if err != nil {
				ln.Close()
				return nil, err
			}
			return ln, nil
		}
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			return ln, nil
		}
		busy, rerr := running(ctx)
		if rerr != nil {
			return nil, rerr
		}
		if busy {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return nil, fmt.Errorf("cannot listen on 127.0.0.1: %w", err)
			}
			a.log.Warn(fmt.Sprintf("the response address remembered in %s, %s, is in use (%v); an operation is running, so "+
				"it stays remembered for the answers it awaits, and this run listens on %s: answers to the requests "+
				"of this run reach only this run", path, addr, unwrapOp(err), ln.Addr()))
			return ln, nil
		}
		ln, err = listenNew()
		if err != nil {
			return nil, err
		}
		if err := replaceRemembered(path, ln.Addr().String()); err != nil {
			ln.Close()
			return nil, err
		}
		a.log.Warn(fmt.Sprintf("the response address remembered in %s, %s, is in use (%v) and no operation awaits an answer "+
			"there: cairn now listens on %s and remembers it instead", path, addr, unwrapOp(err), ln.Addr()))
		return ln, nil
	}
	return nil, fmt.Errorf("cannot agree on a response address in %s with the other cairn processes starting on it", path)
}

// readRemembered returns the address in path, "" when there is none yet. A file that does not
// hold a loopback address with a port (edited by hand, truncated) is an error that says so.
func readRemembered(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("cannot read the remembered response address: %w", err)
	}
	addr := strings.TrimSpace(string(b))
	if addr == "" {
		return "", nil // a start that died between creating and writing it
	}
	host, port, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil || n <= 0 || n > 65535 || !isLoopback(addr) {
		return "", fmt.Errorf("cannot use the response address remembered in %s: %q is not a loopback HOST:PORT "+
			"(remove the file to have cairn pick one)", path, addr)
	}
	return net.JoinHostPort(host, port), nil
}

// listenNew listens on a loopback port below the ephemeral range, or one the system picks
// when the few tried are all taken.
func listenNew() (net.Listener, error) {
	for range 16 {
		port := rememberedPortMin + rand.IntN(rememberedPortMax-rememberedPortMin+1)
		if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			return ln, nil
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("cannot listen on 127.0.0.1: %w", err)
	}
	return ln, nil
}

// createRemembered writes addr to path unless the file exists (fs.ErrExist then). The file
// appears whole or not at all (a hard link of a written temporary file), so that a cairn
// starting at the same moment never reads it empty.
func createRemembered(path, addr string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".listen-*")
	if err != nil {
		return fmt.Errorf("cannot remember the response address: %w", err)
	}
	defer os.Remove(f.Name())
	_, werr := f.WriteString(addr + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(f.Name(), 0o600)
	}
	if werr != nil {
		return fmt.Errorf("cannot remember the response address: %w", werr)
	}
	if err := os.Link(f.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		return fmt.Errorf("cannot remember the response address: %w", err)
	}
	return nil
}

// replaceRemembered writes addr to path in place of what it held, atomically.
func replaceRemembered(path, addr string) error {
	if err := atomicfile.Write(path, []byte(addr+"\n"), 0o600); err != nil {
		return fmt.Errorf("cannot remember the response address: %w", err)
	}
	return nil
}

// unwrapOp drops the "listen tcp ADDR:" prefix of a listen error: the address is said already.
func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}
