package app

import (
	"net"
	"net/http"
	"sync"
)

// newConns tracks the connections that have not sent a request yet. http.Server.Shutdown
// waits up to five seconds for such a connection before it counts as idle (a request might
// be on its way); a handler's HTTP client often leaves one behind after its last PUT, so every
// in-process CLI command would end five seconds late. cairn closes them at once when it stops:
// a client whose request had not started retries on a new connection, and finds none.
type newConns struct {
	mu      sync.Mutex
	conns   map[net.Conn]bool
	closing bool
}

func (n *newConns) track(c net.Conn, st http.ConnState) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conns == nil {
		n.conns = map[net.Conn]bool{}
	}
	switch st {
	case http.StateNew:
		if n.closing {
			c.Close()
			return
		}
		n.conns[c] = true
	default:
		delete(n.conns, c)
	}
}

// closeAll closes the connections that never sent a request, now and from now on.
func (n *newConns) closeAll() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closing = true
	for c := range n.conns {
		c.Close()
		delete(n.conns, c)
	}
}
