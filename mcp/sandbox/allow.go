package sandbox

import (
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/freecode/freecode/config"
)

// allowList is an allow-list parsed (config.AllowedDomain). An entry that
// does not parse matches nothing; config has refused it already.
type allowList []config.AllowedDomain

func parseAllowList(domains []string) allowList {
	var l allowList
	for _, d := range domains {
		if e, err := config.ParseAllowedDomain(d); err == nil {
			l = append(l, e)
		}
	}
	return l
}

// name reports whether an entry names host, and whether one that does
// allows port.
func (l allowList) name(host string, port uint16) (named, portOK bool) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, e := range l {
		if e.Host == "" {
			continue
		}
		if e.Wildcard && strings.HasSuffix(host, "."+e.Host) || !e.Wildcard && host == e.Host {
			named = true
			portOK = portOK || portAllowed(e.Port, port)
		}
	}
	return named, portOK
}

// listed reports whether an entry lists the address a, and whether one
// that does allows port.
func (l allowList) listed(a netip.Addr, port uint16) (listed, portOK bool) {
	a = a.Unmap().WithZone("")
	for _, e := range l {
		if e.Addr.IsValid() && e.Addr == a {
			listed = true
			portOK = portOK || portAllowed(e.Port, port)
		}
	}
	return listed, portOK
}

// portAllowed reports whether an entry whose port is entry (0: none
// named) allows port: the web's two ports, or the one it names.
func portAllowed(entry, port uint16) bool {
	if entry == 0 {
		return port == 80 || port == 443
	}
	return entry == port
}

// Allowed reports whether an entry of the allow-list domains names host
// on some port: a name by itself or by "*.", an address by itself. It
// says nothing of ports, nor of the addresses a name resolves to: the
// Proxy checks those too.
func Allowed(domains []string, host string) bool {
	l := parseAllowList(domains)
	if a, err := netip.ParseAddr(host); err == nil {
		listed, _ := l.listed(a, 0)
		return listed
	}
	named, _ := l.name(host, 0)
	return named
}

// entry is the allow-list entry for host (a name or an address) on port:
// without the port for 80 and 443, which an entry allows by default.
func entry(host, port string) string {
	if port == "" || port == "80" || port == "443" {
		return host
	}
	return net.JoinHostPort(host, port)
}

// parsePort parses a request's port.
func parsePort(s string) (uint16, bool) {
	n, err := strconv.ParseUint(s, 10, 16)
	return uint16(n), err == nil && n != 0
}

var (
	cgnat = netip.MustParsePrefix("100.64.0.0/10")
	// The other blocks of IANA's special-purpose registries that are not
	// globally reachable (the standard library's methods name the rest);
	// for IPv6, everything outside 2000::/3 is not either.
	notGlobal4 = prefixes("0.0.0.0/8", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4")
	global6    = netip.MustParsePrefix("2000::/3")
	notGlobal6 = prefixes("2001::/23", "2001:db8::/32", "3fff::/20")
	// IPv6 addresses that carry an IPv4 one, and go where it does.
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

func prefixes(ss ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		ps[i] = netip.MustParsePrefix(s)
	}
	return ps
}

func inAny(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// nonPublic says what a is when it is not a public address, as "a
// loopback address"; "" for a public one. IPv4-mapped addresses are
// judged as the IPv4 ones they are.
func nonPublic(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	switch {
	case !a.IsValid():
		return "no address"
	case a.IsUnspecified():
		return "an unspecified address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsLinkLocalUnicast():
		return "a link-local address" // 169.254.169.254, the clouds' metadata, among them
	case a.IsMulticast():
		return "a multicast address"
	case a.IsPrivate():
		return "a private address"
	case cgnat.Contains(a):
		return "a private address (carrier-grade NAT)"
	}
	const reserved = "an address that is not globally routable"
	if a.Is4() {
		if inAny(notGlobal4, a) {
			return reserved
		}
		return ""
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return nonPublic(netip.AddrFrom4([4]byte(b[12:16])))
	case sixToFour.Contains(a):
		return nonPublic(netip.AddrFrom4([4]byte(b[2:6])))
	case !global6.Contains(a) || inAny(notGlobal6, a):
		return reserved
	}
	return ""
}
