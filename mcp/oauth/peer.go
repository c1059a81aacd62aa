package oauth

import (
	"context"
	"net"
	"os"
)

// peer is what the socket tables tell of the other end of a connection
// to the callback (loopbackPeer). Only Linux tells anything.
type peer struct {
	known  bool // the tables were read
	found  bool // the other end is a socket of this network namespace
	uid    int  // its owner
	orphan bool // a socket closed already: no browser waits on it
	// ours, for an other end not found: the callback's own end was
	// established, so the other end is a socket of another namespace or
	// machine, not one reset to hide.
	ours bool
}

// refused reports whether a callback over a connection from p is
// refused: one from another user's socket (root aside: a relay of the
// system's may run as root, and root reads the user's files anyway), from
// a socket closed or reset before the callback was looked at, which no
// browser does and which would hide its owner. One nothing is known of
// (not Linux) is let through, with the state alone to match.
func (p peer) refused() bool {
	switch {
	case !p.known:
		return false
	case p.found:
		return p.orphan || (p.uid != os.Getuid() && p.uid != 0)
	default:
		return !p.ours
	}
}

// peerKey is the context key of a callback connection's peer.
type peerKey struct{}

// peerContext is the callback server's ConnContext: it looks the peer up
// as the connection is accepted, before its request is read.
func peerContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, peerKey{}, loopbackPeer(c))
}
