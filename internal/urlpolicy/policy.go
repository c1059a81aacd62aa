// Package urlpolicy is FreeCode's one policy for the URLs of remote MCP
// servers, and its one redaction of URLs and secrets. Config validation
// applies the policy to a URL's text when a file is read; the MCP dialer
// applies it again to every address it is about to connect to (after DNS)
// and to every redirect, so a host name that resolves somewhere forbidden,
// or a rebinding DNS answer, is refused all the same.
//
// The policy: https to anywhere; plain http only to loopback (localhost,
// *.localhost, 127.0.0.0/8, ::1); never a link-local address (169.254.0.0/16,
// fe80::/10), never a cloud provider's metadata endpoint, never a numeric
// host spelled in a form only some resolvers read (2130706433, 0x7f.1).
package urlpolicy

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// ErrRefused means a URL, a redirect or a resolved address breaks the
// policy. Nothing was sent.
var ErrRefused = errors.New("remote URL refused")

// The rules, as errors show them.
const (
	RuleScheme    = "only https, or http to loopback, is allowed"
	RuleHTTPLocal = "http is allowed only to a loopback host (localhost, 127.0.0.0/8, ::1); use https"
	RuleLinkLocal = "link-local addresses (169.254.0.0/16, fe80::/10) are never dialed"
	RuleMetadata  = "cloud metadata endpoints are never dialed"
	RuleNumeric   = "a numeric host must be a dotted-quad IPv4 or a bracketed IPv6 address: other forms (2130706433, 0x7f.1, 0177.0.0.1) are read differently by different resolvers"
	RuleNoHost    = "the URL has no host"
	RuleDowngrade = "a redirect from https to plain http is never followed"
)

// Error is a refusal: it names what was refused and the rule, and wraps
// ErrRefused.
type Error struct {
	Target string // a redacted URL or an address
	Rule   string
}

func (e *Error) Error() string { return fmt.Sprintf("%v: %s: %s", ErrRefused, e.Target, e.Rule) }

// Unwrap returns ErrRefused.
func (e *Error) Unwrap() error { return ErrRefused }

// Check applies the policy to u by its text alone: scheme, host name,
// literal address. The addresses a host name resolves to are checked at
// dial time (see Control).
func Check(u *url.URL) error {
	refuse := func(rule string) error { return &Error{Target: RedactURL(u.String()), Rule: rule} }
	host := normalHost(u.Hostname())
	if host == "" {
		return refuse(RuleNoHost)
	}
	if metadataHosts[host] {
		return refuse(RuleMetadata)
	}
	addr, isIP := ParseHostAddr(host)
	if isIP {
		if rule := addrRule(addr); rule != "" {
			return refuse(rule)
		}
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		// Over http such a host is refused anyway: it is not loopback by
		// its text.
		if !isIP && numericForm(host) {
			return refuse(RuleNumeric)
		}
		return nil
	case "http":
		if IsLoopbackHost(host) {
			return nil
		}
		return refuse(RuleHTTPLocal)
	default:
		return refuse(RuleScheme)
	}
}

// CheckAddr applies the policy to an address about to be dialed.
// loopbackOnly is for plain http.
func CheckAddr(addr netip.Addr, loopbackOnly bool) error {
	addr = unwrap(addr)
	if rule := addrRule(addr); rule != "" {
		return &Error{Target: addr.String(), Rule: rule}
	}
	if loopbackOnly && !addr.IsLoopback() {
		return &Error{Target: addr.String(), Rule: RuleHTTPLocal}
	}
	return nil
}

// IsLoopbackHost reports whether host (without port) names loopback by its
// text: "localhost", a name under .localhost (RFC 6761 reserves both for
// loopback), or a loopback address. The dialer still checks that such a
// name resolves to loopback.
func IsLoopbackHost(host string) bool {
	host = normalHost(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	addr, ok := ParseHostAddr(host)
	return ok && addr.IsLoopback()
}

// ParseHostAddr parses host as an IP address, its zone dropped and an
// IPv4 address carried in IPv6 (::ffff:a.b.c.d, or 64:ff9b::/96 NAT64)
// unwrapped, so that ::ffff:169.254.169.254 is seen for what it is.
func ParseHostAddr(host string) (netip.Addr, bool) {
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return unwrap(addr), true
}

// nat64 is the well-known NAT64 prefix (RFC 6052): 64:ff9b::a.b.c.d
// reaches a.b.c.d through a NAT64 gateway.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

func unwrap(addr netip.Addr) netip.Addr {
	addr = addr.WithZone("").Unmap()
	if addr.Is6() && nat64.Contains(addr) {
		b := addr.As16()
		return netip.AddrFrom4([4]byte(b[12:]))
	}
	return addr
}

// addrRule returns the rule an address breaks wherever it is dialed, or "".
func addrRule(addr netip.Addr) string {
	for _, p := range metadataPrefixes {
		if p.Contains(addr) {
			return RuleMetadata
		}
	}
	if addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() {
		return RuleLinkLocal
	}
	return ""
}

// normalHost lowercases host and drops a trailing dot, the forms in which a
// name is the same name.
func normalHost(host string) string {
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// numericForm reports whether host, which is not an IP address literal,
// is made of numbers only (decimal, octal or hex, one to four of them):
// a form that inet_aton, and so some resolvers, read as an IPv4 address.
func numericForm(host string) bool {
	labels := strings.Split(host, ".")
	if len(labels) > 4 {
		return false
	}
	for _, l := range labels {
		if !inetNumber(l) {
			return false
		}
	}
	return true
}

// inetNumber reports whether s is a number as inet_aton reads one:
// decimal, 0x hex or 0-prefixed octal.
func inetNumber(s string) bool {
	base := 10
	switch {
	case len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) > 1 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" {
		return false
	}
	_, err := strconv.ParseUint(s, base, 64)
	return err == nil
}
