package server

import (
	"fmt"
	"net"
	"sync"
	"time"

	lsp "go.lsp.dev/protocol"

	"github.com/freecode/freecode/internal/protocol"
)

// What one frontend of a sidecar that listens may cost it. Any local
// program can connect to the socket; until its initialize has presented
// the token it is nobody, and gets little: a small frame, a deadline, one
// of a few slots. A frontend that presented it is the user's, but still
// one of several, and one that asks without end, or never reads, is
// disconnected rather than let grow the sidecar for all the others.
// docs/protocol.md states these figures.
const (
	// handshakeFrame is the most bytes of a frame's body before
	// initialize has presented the token: an initialize is a few hundred.
	handshakeFrame = 64 << 10
	// handshakeTimeout is how long a connection may take to present the
	// token; past it, it is closed.
	handshakeTimeout = 10 * time.Second
	// maxHandshakes is how many accepted connections may be without the
	// token at once. With all of them taken, Serve accepts no more until
	// one presents it or closes: the next wait in the listener's backlog.
	maxHandshakes = 64
	// handshakePenalty is how long the slot of a connection that ended
	// without presenting the token stays taken: a client that connects
	// again and again, to be refused or to say nothing, gets the sidecar
	// to accept at most maxHandshakes of its connections in that time.
	handshakePenalty = 50 * time.Millisecond
	// maxInFlight is how many requests of one frontend may run at once.
	maxInFlight = 256
	// maxQueued is how many messages may wait to be written to one
	// frontend: more than its requests in flight can leave at once, so
	// only a frontend that reads nothing comes to it.
	maxQueued = 2 * maxInFlight
)

// The frame cap after initialize is protocol.MaxFrame.

// maxFrame is the cap of the frontend's next frame: protocol.MaxFrame
// once it presented the token, handshakeFrame before.
func (sess *session) maxFrame() int {
	if sess.trusted.Load() {
		return protocol.MaxFrame
	}
	return handshakeFrame
}

// deadliner is a connection that takes deadlines: a socket's (a pipe's
// too). A stdio sidecar's streams need none: they have no token to wait
// for.
type deadliner interface{ SetDeadline(time.Time) error }

// startHandshake starts the clock of a frontend that must present the
// token: by handshakeTimeout its connection is cut, unless initialize
// took the token first. Reads and writes both: a frontend that reads
// nothing must not hold the answer to its initialize, and the read loop
// with it, forever.
func (sess *session) startHandshake() {
	if d, ok := sess.rwc.(deadliner); ok {
		d.SetDeadline(time.Now().Add(handshakeTimeout))
	}
}

// passHandshake is initialize's taking the token: the frontend gets the
// frame cap of the rest, no deadline, and leaves its handshake slot. It
// runs on the read loop, which reads nothing meanwhile, and before the
// notifications begin: nothing else uses the deadline.
func (sess *session) passHandshake() {
	sess.trusted.Store(true)
	if d, ok := sess.rwc.(deadliner); ok {
		d.SetDeadline(time.Time{})
	}
	sess.handshook()
}

// leaveHandshake frees the handshake slot of a connection that ends, if
// initialize did not free it already: after handshakePenalty.
func (sess *session) leaveHandshake() {
	if sess.trusted.Load() {
		return
	}
	time.AfterFunc(handshakePenalty, sess.handshook)
}

// admit counts a request of the frontend in; false, with the frontend
// being disconnected, if it has maxInFlight running already. Call release
// once an admitted request is handled.
func (sess *session) admit() bool {
	if sess.inFlight.Add(1) <= maxInFlight {
		return true
	}
	sess.inFlight.Add(-1)
	sess.overloaded(fmt.Sprintf("it has %d requests in flight, the most one frontend may have", maxInFlight), true)
	return false
}

func (sess *session) release() { sess.inFlight.Add(-1) }

// overloaded disconnects a frontend that asked more than one may, first
// telling it why with a window/logMessage when it reads (tell). The
// sidecar's other frontends are not affected.
func (sess *session) overloaded(why string, tell bool) {
	if !sess.overloading.CompareAndSwap(false, true) {
		return
	}
	sess.logger.Warn("disconnecting the frontend", "reason", why)
	if tell {
		// A frontend that reads nothing would hold the message, and
		// this, forever: closeGrace is what it gets to take it.
		cut := time.AfterFunc(closeGrace, sess.cut)
		sess.logMessage(lsp.MessageTypeError, "freecode-serve: disconnecting this frontend: "+why)
		cut.Stop()
	}
	sess.cut()
}

// cut ends the session and its connection at once: what it had running is
// cancelled, and what waits to be written to it fails.
func (sess *session) cut() {
	sess.cancel()
	sess.rwc.Close()
}

// slotListener is the listener of ServeWeb: what Serve's accept loop
// does for sockets, for net/http's. Each connection it accepts holds one
// of maxHandshakes slots until it is a WebSocket that passed initialize
// (release), or closed and handshakePenalty passed; with all of them
// held, Accept waits. One that is neither a handshakeTimeout after it was
// accepted is closed: a browser's keep-alive connection that fetched the
// page as well, which the browser opens again when it needs one.
type slotListener struct {
	net.Listener
	slots chan struct{}
	done  <-chan struct{} // the server's: Accept waits no more
}

func newSlotListener(ln net.Listener, done <-chan struct{}) *slotListener {
	return &slotListener{Listener: ln, slots: make(chan struct{}, maxHandshakes), done: done}
}

// slotKey is the context key of a request's *slotConn.
type slotKey struct{}

func (l *slotListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	sc := &slotConn{Conn: c}
	var once sync.Once
	sc.release = func() {
		once.Do(func() {
			sc.timer.Stop()
			<-l.slots
		})
	}
	sc.timer = time.AfterFunc(handshakeTimeout, func() { c.Close() })
	return sc, nil
}

// slotConn is a connection of a slotListener.
type slotConn struct {
	net.Conn
	timer   *time.Timer
	release func() // frees the slot, once; the connection stays
	closed  sync.Once
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.closed.Do(func() {
		c.timer.Stop()
		time.AfterFunc(handshakePenalty, c.release)
	})
	return err
}
