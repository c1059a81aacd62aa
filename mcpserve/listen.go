package mcpserve

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// ListenOptions configures Listen.
type ListenOptions struct {
	// AllowRemote allows an address that is not loopback (another
	// interface, or all of them). The caller must then require a token.
	AllowRemote bool
}

// Listen opens the TCP listener of `freecode mcp serve --http addr`. addr is
// host:port with host an IP address or "localhost" (which is 127.0.0.1);
// port 0 picks a free port. A host that is not loopback is refused unless
// opts.AllowRemote, and a host name other than localhost always is: what
// it resolves to could change under the check.
func Listen(ctx context.Context, addr string, opts *ListenOptions) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--http %q: want host:port, such as 127.0.0.1:8765: %w", addr, err)
	}
	if strings.EqualFold(host, "localhost") || host == "" {
		host = "127.0.0.1"
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return nil, fmt.Errorf("--http %q: the host must be an IP address or localhost", addr)
	}
	if !ip.IsLoopback() && (opts == nil || !opts.AllowRemote) {
		return nil, fmt.Errorf("--http %q: %s is not a loopback address; any machine that can reach it could call your tools (pass --allow-remote to bind it anyway, with a token)", addr, ip)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(ip.String(), port))
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	return ln, nil
}
