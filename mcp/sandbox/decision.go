package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Decision is one request the proxy let through or refused.
type Decision struct {
	Time time.Time
	Host string // as the server named it, lower case, no final dot; IPv6 without brackets
	Port string
	// Addrs are the addresses Host resolved to, or Host itself if it is
	// one, each checked: the proxy connects to these and to nothing else.
	// Empty when the request was refused before a lookup.
	Addrs   []netip.Addr
	Allowed bool
	// Refused is why a request was not let through (RefusedName, …), ""
	// if it was; Why says so in plain words: "port 22 is not allowed",
	// "resolves to 127.0.0.1, a loopback address".
	Refused string
	Why     string
}

// Why the proxy refused a request.
const (
	RefusedName    = "name"    // no entry of the allow-list names the host
	RefusedPort    = "port"    // entries name it, but not on this port
	RefusedAddress = "address" // it resolves to an address neither public nor listed
	FailedLookup   = "lookup"  // its name did not resolve: no fault of the sandbox
)

// check decides a request for host:port (see Proxy): it looks a name up,
// once, and checks each of its addresses.
func (p *Proxy) check(ctx context.Context, host string, port uint16) Decision {
	d := Decision{Time: time.Now(), Host: strings.ToLower(strings.TrimSuffix(host, ".")), Port: strconv.Itoa(int(port))}
	refused := func(why, format string, args ...any) Decision {
		d.Refused, d.Why = why, fmt.Sprintf(format, args...)
		return d
	}
	if a, err := netip.ParseAddr(host); err == nil {
		d.Addrs = []netip.Addr{a.Unmap().WithZone("")}
		switch listed, portOK := p.allow.listed(a, port); {
		case !listed:
			return refused(RefusedName, "not in allowedDomains")
		case !portOK:
			return refused(RefusedPort, "port %d is not allowed", port)
		}
		d.Allowed = true
		return d
	}
	switch named, portOK := p.allow.name(host, port); {
	case !named:
		return refused(RefusedName, "not in allowedDomains")
	case !portOK:
		return refused(RefusedPort, "port %d is not allowed", port)
	}
	addrs, err := p.opts.LookupIP(ctx, host)
	if err == nil && len(addrs) == 0 {
		err = errors.New("no address")
	}
	if err != nil {
		return refused(FailedLookup, "does not resolve: %v", err)
	}
	for _, a := range addrs {
		d.Addrs = append(d.Addrs, a.Unmap().WithZone(""))
	}
	for _, a := range d.Addrs {
		if what := nonPublic(a); what != "" {
			if listed, portOK := p.allow.listed(a, port); !listed || !portOK {
				return refused(RefusedAddress, "resolves to %s, %s", a, what)
			}
		}
	}
	d.Allowed = true
	return d
}

// refuse answers a request that d did not let through.
func refuse(w http.ResponseWriter, d Decision) {
	hostPort := net.JoinHostPort(d.Host, d.Port)
	switch d.Refused {
	case RefusedName:
		http.Error(w, fmt.Sprintf("FreeCode sandbox: %s is not in this server's allowedDomains", entry(d.Host, d.Port)), http.StatusForbidden)
	case RefusedPort:
		http.Error(w, fmt.Sprintf("FreeCode sandbox: %s: %s (an allowedDomains entry without a port allows 80 and 443)", hostPort, d.Why), http.StatusForbidden)
	case RefusedAddress:
		http.Error(w, fmt.Sprintf("FreeCode sandbox: %s %s; the sandbox reaches only public addresses, unless allowedDomains lists the address", hostPort, d.Why), http.StatusForbidden)
	default:
		http.Error(w, fmt.Sprintf("FreeCode sandbox: %s %s", d.Host, d.Why), http.StatusBadGateway)
	}
}
