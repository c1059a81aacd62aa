package mcp

import (
	"context"
	"net"
	"time"

	"github.com/freecode/freecode/internal/urlpolicy"
)

// ErrURLRefused means a remote server's URL (or a redirect, or the address
// its host name resolved to) breaks FreeCode's URL policy: https anywhere,
// plain http only to loopback, never link-local or cloud-metadata addresses
// (see internal/urlpolicy). Nothing was sent.
var ErrURLRefused = urlpolicy.ErrRefused

// ruleSSEOrigin is the rule of the legacy SSE transport on top of the
// policy (see remoteRoundTripper).
const ruleSSEOrigin = "a legacy SSE server may name a message endpoint only on its own origin (scheme, host and port)"

// newPolicyDialer returns a dialer that applies the URL policy to the
// resolved address before connecting. loopbackOnly is for plain http.
func newPolicyDialer(timeout time.Duration, loopbackOnly bool) *net.Dialer {
	return &net.Dialer{
		Timeout:   timeout,
		KeepAlive: 30 * time.Second,
		Control:   urlpolicy.Control(loopbackOnly),
	}
}

// dialFunc is the DialContext signature of http.Transport.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)
