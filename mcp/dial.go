package mcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrURLRefused means a remote server's URL (or a redirect, or the address
// its host name resolved to) breaks FreeCode's URL policy: https anywhere,
// plain http only to loopback, never link-local or cloud-metadata addresses.
// Nothing was sent.
var ErrURLRefused = errors.New("remote URL refused")

// The rules of the URL policy, as they appear in errors.
const (
	ruleScheme    = "only https, or http to loopback, is allowed"
	ruleHTTPLocal = "plain http is allowed only to loopback (127.0.0.0/8, ::1); use https"
	ruleLinkLocal = "link-local addresses (169.254.0.0/16, fe80::/10) are never dialed"
	ruleMetadata  = "cloud metadata endpoints are never dialed"
	ruleDowngrade = "a redirect from https to plain http is never followed"
	ruleSSEOrigin = "a legacy SSE server may name a message endpoint only on its own origin (scheme, host and port)"
)

// metadataAddr is the AWS IMDS IPv6 address; its IPv4 twin 169.254.169.254
// is covered by the link-local rule.
var metadataAddr = netip.MustParseAddr("fd00:ec2::254")

// metadataHosts are refused by name, before any DNS lookup.
var metadataHosts = map[string]bool{
	"metadata.google.internal": true,
}

// policyError is a refusal: it names the rule, and wraps ErrURLRefused.
type policyError struct {
	target string // what was refused: a redacted URL or an address
	rule   string
}

func (e *policyError) Error() string {
	return fmt.Sprintf("%v: %s: %s", ErrURLRefused, e.target, e.rule)
}

func (e *policyError) Unwrap() error { return ErrURLRefused }

// checkURL applies the URL policy to a URL by its text alone (scheme, host
// name, literal address). The dialer checks the resolved address again,
// so a host name that resolves somewhere forbidden is still refused.
func checkURL(u *url.URL) error {
	refuse := func(rule string) error { return &policyError{target: redactURL(u.String()), rule: rule} }
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return refuse("the URL has no host")
	}
	if metadataHosts[host] {
		return refuse(ruleMetadata)
	}
	addr, isIP := parseHostAddr(host)
	if isIP {
		if rule := addrRule(addr); rule != "" {
			return refuse(rule)
		}
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if host == "localhost" || strings.HasSuffix(host, ".localhost") || (isIP && addr.IsLoopback()) {
			return nil
		}
		return refuse(ruleHTTPLocal)
	default:
		return refuse(ruleScheme)
	}
}

// parseHostAddr parses host as an IP address, zone stripped and IPv4-mapped
// IPv6 unmapped so that ::ffff:169.254.169.254 is seen for what it is.
func parseHostAddr(host string) (netip.Addr, bool) {
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return addr.WithZone("").Unmap(), true
}

// addrRule returns the rule an address breaks wherever it is dialed, or "".
func addrRule(addr netip.Addr) string {
	switch {
	case addr == metadataAddr:
		return ruleMetadata
	case addr.IsLinkLocalUnicast(), addr.IsLinkLocalMulticast():
		return ruleLinkLocal
	}
	return ""
}

// policyControl returns a net.Dialer Control function that checks the
// address actually being dialed, after DNS: this is what stops a DNS answer
// (or a rebinding one) from routing around checkURL. It runs before
// connect(2), so a refused address never sees a packet.
func policyControl(loopbackOnly bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return &policyError{target: address, rule: "unparsable address"}
		}
		addr, ok := parseHostAddr(host)
		if !ok {
			return &policyError{target: address, rule: "unparsable address"}
		}
		if rule := addrRule(addr); rule != "" {
			return &policyError{target: addr.String(), rule: rule}
		}
		if loopbackOnly && !addr.IsLoopback() {
			return &policyError{target: addr.String(), rule: ruleHTTPLocal}
		}
		return nil
	}
}

// newPolicyDialer returns a dialer that enforces the URL policy on the
// resolved address. loopbackOnly is for plain http.
func newPolicyDialer(timeout time.Duration, loopbackOnly bool) *net.Dialer {
	return &net.Dialer{
		Timeout:   timeout,
		KeepAlive: 30 * time.Second,
		Control:   policyControl(loopbackOnly),
	}
}

// checkRedirect re-applies the URL policy to every redirect, and bounds
// their number like net/http's default does.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	// Plain http is allowed to loopback only, so a downgrade would let a
	// remote https server turn the sidecar against the user's own
	// machine (a POST to a local service), and expose the rest in clear.
	if len(via) > 0 && via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
		return &policyError{target: redactURL(req.URL.String()), rule: ruleDowngrade}
	}
	return checkURL(req.URL)
}

// sameOrigin reports whether a and b have the same scheme, host and port
// (an omitted port being the scheme's default).
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(strings.TrimSuffix(a.Hostname(), "."), strings.TrimSuffix(b.Hostname(), ".")) &&
		port(a) == port(b)
}

// dialFunc is the DialContext signature of http.Transport.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)
