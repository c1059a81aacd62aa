package urlpolicy

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
)

// Control returns a net.Dialer Control function that applies the policy to
// the address being dialed, after DNS and before connect(2): a host name
// that resolves to a forbidden address, or a rebinding DNS answer, never
// sees a packet. loopbackOnly is for plain http.
func Control(loopbackOnly bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return &Error{Target: address, Rule: "unparsable address"}
		}
		addr, ok := ParseHostAddr(host)
		if !ok {
			return &Error{Target: address, Rule: "unparsable address"}
		}
		return CheckAddr(addr, loopbackOnly)
	}
}

// CheckRedirect is an http.Client CheckRedirect that applies the policy to
// every redirect and bounds their number like net/http's default does.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	// Plain http is allowed to loopback only, so a downgrade would let a
	// remote https server turn the client against the user's own machine
	// (a POST to a local service), and expose the rest in clear.
	if len(via) > 0 && via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
		return &Error{Target: RedactURL(req.URL.String()), Rule: RuleDowngrade}
	}
	return Check(req.URL)
}

// SameOrigin reports whether a and b have the same scheme, host and port
// (an omitted port being the scheme's default).
func SameOrigin(a, b *url.URL) bool {
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
		normalHost(a.Hostname()) == normalHost(b.Hostname()) &&
		port(a) == port(b)
}
