package sandbox

import (
	"net/netip"
	"net/url"
	"strings"

	"github.com/freecode/freecode/config"
)

// Reaches reports whether a server sandboxed with network (and, with
// config.NetworkDomains, the allow-list domains) could reach origin, an
// origin an MCP Apps view of the server declares for its loads
// (scheme://host[:port]; "*." before a name for the names below it), and
// if not, why, in words to show. A view must not reach further than its
// server: its page could otherwise carry off what the sandbox keeps in.
// The ports are the scheme's (443 for https and wss, 80 for http and ws)
// unless the origin names one; an origin for the names below a domain is
// reached only where the allow-list has the same or a wider "*." entry.
func Reaches(network string, domains []string, origin string) (bool, string) {
	switch network {
	case config.NetworkAll:
		return true, ""
	case config.NetworkNone:
		return false, `outside the server's sandbox, which has no network ("network": "none")`
	}
	wildcard := false
	rest := origin
	if scheme, after, ok := strings.Cut(origin, "://*."); ok {
		wildcard, rest = true, scheme+"://"+after
	}
	u, err := url.Parse(rest)
	if err != nil || u.Host == "" {
		return false, "not an origin"
	}
	port := uint16(443)
	if u.Scheme == "http" || u.Scheme == "ws" {
		port = 80
	}
	if p := u.Port(); p != "" {
		n, ok := parsePort(p)
		if !ok {
			return false, "not an origin"
		}
		port = n
	}
	l := parseAllowList(domains)
	host := strings.ToLower(u.Hostname())
	outside := "outside the server's sandbox, whose network reaches only " + strings.Join(domains, ", ")
	if len(domains) == 0 {
		outside = `outside the server's sandbox, whose allow-list is empty`
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if listed, portOK := l.listed(a, port); listed && portOK {
			return true, ""
		}
		return false, outside
	}
	if wildcard {
		for _, e := range l {
			if e.Wildcard && (host == e.Host || strings.HasSuffix(host, "."+e.Host)) && portAllowed(e.Port, port) {
				return true, ""
			}
		}
		return false, outside
	}
	if named, portOK := l.name(host, port); named && portOK {
		return true, ""
	}
	return false, outside
}
