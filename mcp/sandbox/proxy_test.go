package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/freecode/freecode/config"
)

// upstream is an HTTP server on the loopback that counts the connections
// it accepts.
type upstream struct {
	*httptest.Server
	accepts atomic.Int32
}

type countingListener struct {
	net.Listener
	n *atomic.Int32
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{}
	u.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "upstream") }))
	u.Listener = countingListener{u.Listener, &u.accepts}
	u.Start()
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) port() string {
	_, port, _ := net.SplitHostPort(u.Listener.Addr().String())
	return port
}

// proxyRig is a Proxy on a loopback listener whose names resolve as the
// test says, counting lookups, and whose dials are recorded.
type proxyRig struct {
	px      *Proxy
	addr    string // the proxy's
	lookups atomic.Int32

	dialsMu sync.Mutex
	dials   []string
}

// newProxyRig serves a proxy of domains, with names resolving as names
// says. With redirect set, every dial goes to up whatever its address
// (so that ports 80 and 443 and public addresses can be tested on the
// loopback); else dials are real.
func newProxyRig(t *testing.T, domains []string, names map[string][]netip.Addr, up *upstream, redirect bool) *proxyRig {
	t.Helper()
	r := &proxyRig{}
	d := &net.Dialer{}
	opts := &ProxyOptions{
		LookupIP: func(ctx context.Context, host string) ([]netip.Addr, error) {
			r.lookups.Add(1)
			if a, ok := names[host]; ok {
				return a, nil
			}
			return nil, errors.New("no such host")
		},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			r.dialsMu.Lock()
			r.dials = append(r.dials, addr)
			r.dialsMu.Unlock()
			if redirect {
				addr = up.Listener.Addr().String()
			}
			return d.DialContext(ctx, network, addr)
		},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.px = NewProxy(domains, opts)
	r.px.Serve(ln)
	r.addr = ln.Addr().String()
	t.Cleanup(func() { r.px.Close() })
	return r
}

func (r *proxyRig) dialed() []string {
	r.dialsMu.Lock()
	defer r.dialsMu.Unlock()
	return append([]string(nil), r.dials...)
}

// connect asks the proxy to CONNECT to hostPort and, if it agrees, GETs /
// through the tunnel; it returns the proxy's status line and the body.
func (r *proxyRig) connect(t *testing.T, hostPort string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", r.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hostPort, hostPort)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", hostPort)
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("through the tunnel to %s: %v", hostPort, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// get GETs rawURL, a plain http:// one, through the proxy.
func (r *proxyRig) get(t *testing.T, rawURL string) (int, string) {
	t.Helper()
	px, _ := url.Parse("http://" + r.addr)
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(px), DisableKeepAlives: true}}
	defer c.CloseIdleConnections()
	resp, err := c.Get(rawURL)
	if err != nil {
		t.Fatalf("GET %s: %v", rawURL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// request makes the request of mode ("connect" or "http") to host:port.
func (r *proxyRig) request(t *testing.T, mode, host, port string) (int, string) {
	t.Helper()
	if mode == "connect" {
		return r.connect(t, net.JoinHostPort(host, port))
	}
	return r.get(t, "http://"+net.JoinHostPort(host, port)+"/")
}

var modes = []string{"connect", "http"}

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

// An allowed name that resolves to the loopback reaches nothing there: no
// connection is made at all. Listing the loopback address, on the port,
// lets the same request through, to the address and not the name.
func TestProxyNameToLoopback(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			up := newUpstream(t)
			port := up.port()
			names := map[string][]netip.Addr{"svc.example.test": addrs("127.0.0.1")}

			r := newProxyRig(t, []string{"svc.example.test:" + port}, names, up, false)
			status, body := r.request(t, mode, "svc.example.test", port)
			if status != http.StatusForbidden || !strings.Contains(body, "resolves to 127.0.0.1, a loopback address") {
				t.Errorf("refused: %d %q, want 403 saying it resolves to a loopback address", status, body)
			}
			if n := up.accepts.Load(); n != 0 || len(r.dialed()) != 0 {
				t.Errorf("the refused request made %d connections to the loopback listener (dials %v)", n, r.dialed())
			}
			log := r.px.Log()
			if len(log) != 1 || log[0].Allowed || log[0].Refused != RefusedAddress || log[0].Port != port ||
				len(log[0].Addrs) != 1 || log[0].Addrs[0] != netip.MustParseAddr("127.0.0.1") {
				t.Errorf("the log: %+v", log)
			}

			r = newProxyRig(t, []string{"svc.example.test:" + port, "127.0.0.1:" + port}, names, up, false)
			if status, body := r.request(t, mode, "svc.example.test", port); status != http.StatusOK || body != "upstream" {
				t.Errorf("with 127.0.0.1:%s listed: %d %q, want 200 upstream", port, status, body)
			}
			if got, want := r.dialed(), []string{"127.0.0.1:" + port}; !slices.Equal(got, want) {
				t.Errorf("dials %v, want %v", got, want)
			}
			if n := up.accepts.Load(); n != 1 {
				t.Errorf("%d connections reached the listener, want 1", n)
			}
		})
	}
}

// A name's addresses are each checked: one that is not public refuses the
// request unless it is listed on that port, whichever the server asks for.
func TestProxyNonPublicAddresses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		domains []string
		resolve []string
		allowed bool
	}{
		{"public", nil, []string{"93.184.215.14"}, true},
		{"public IPv6", nil, []string{"2606:2800:21f:cb07:6820:80da:af6b:8b2c"}, true},
		{"RFC 1918", nil, []string{"10.1.2.3"}, false},
		{"RFC 1918, another", nil, []string{"192.168.1.1"}, false},
		{"carrier-grade NAT", nil, []string{"100.64.0.1"}, false},
		{"metadata", nil, []string{"169.254.169.254"}, false},
		{"IPv6 link-local", nil, []string{"fe80::1"}, false},
		{"IPv6 unique local", nil, []string{"fd00::1"}, false},
		{"IPv4-mapped loopback", nil, []string{"::ffff:127.0.0.1"}, false},
		{"unspecified", nil, []string{"0.0.0.0"}, false},
		{"a public and a private one", nil, []string{"93.184.215.14", "10.0.0.1"}, false},
		{"the private one listed", []string{"10.0.0.1"}, []string{"93.184.215.14", "10.0.0.1"}, true},
		{"listed on another port", []string{"10.0.0.1:8080"}, []string{"10.0.0.1"}, false},
	} {
		for _, mode := range modes {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				up := newUpstream(t)
				port := map[string]string{"connect": "443", "http": "80"}[mode]
				names := map[string][]netip.Addr{"api.example.test": addrs(tc.resolve...)}
				r := newProxyRig(t, append([]string{"api.example.test"}, tc.domains...), names, up, true)
				status, _ := r.request(t, mode, "api.example.test", port)
				if got := status == http.StatusOK; got != tc.allowed {
					t.Errorf("status %d, want allowed %v", status, tc.allowed)
				}
				if n := up.accepts.Load(); (n != 0) != tc.allowed {
					t.Errorf("%d connections reached the upstream", n)
				}
				if tc.allowed {
					want := netip.AddrPortFrom(netip.MustParseAddr(tc.resolve[0]).Unmap(), map[string]uint16{"443": 443, "80": 80}[port]).String()
					if d := r.dialed(); len(d) != 1 || d[0] != want {
						t.Errorf("dials %v, want [%s]", d, want)
					}
				}
			})
		}
	}
}

// Ports: 80 and 443 for an entry without one, else the one it names; a
// wildcard entry likewise.
func TestProxyPorts(t *testing.T) {
	names := map[string][]netip.Addr{
		"registry.example.test": addrs("93.184.215.14"),
		"a.example.org":         addrs("93.184.215.15"),
	}
	for _, tc := range []struct {
		host, port string
		allowed    bool
	}{
		{"registry.example.test", "443", true},
		{"registry.example.test", "80", true},
		{"registry.example.test", "22", false},
		{"registry.example.test", "8443", false},
		{"a.example.org", "8443", true},
		{"a.example.org", "443", false},
		{"93.184.215.14", "443", false}, // an address is not its name
	} {
		for _, mode := range modes {
			t.Run(tc.host+":"+tc.port+"/"+mode, func(t *testing.T) {
				up := newUpstream(t)
				r := newProxyRig(t, []string{"registry.example.test", "*.example.org:8443"}, names, up, true)
				status, body := r.request(t, mode, tc.host, tc.port)
				if got := status == http.StatusOK; got != tc.allowed {
					t.Errorf("status %d %q, want allowed %v", status, body, tc.allowed)
				}
				log := r.px.Log()
				if len(log) != 1 || log[0].Allowed != tc.allowed {
					t.Fatalf("the log: %+v", log)
				}
				if !tc.allowed && net.ParseIP(tc.host) == nil {
					if log[0].Refused != RefusedPort || log[0].Why != "port "+tc.port+" is not allowed" || !strings.Contains(body, log[0].Why) {
						t.Errorf("refusal %+v, body %q", log[0], body)
					}
					if n := r.lookups.Load(); n != 0 {
						t.Errorf("a refused port looked the name up %d times", n)
					}
				}
				if n := up.accepts.Load(); (n != 0) != tc.allowed {
					t.Errorf("%d connections reached the upstream", n)
				}
			})
		}
	}
}

// The proxy resolves a name once and connects to the address it checked:
// a second answer (DNS rebinding to the loopback) is never asked for.
func TestProxyDialsCheckedAddress(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			up := newUpstream(t)
			r := &proxyRig{}
			var answers atomic.Int32
			d := &net.Dialer{}
			r.px = NewProxy([]string{"rebind.example.test"}, &ProxyOptions{
				LookupIP: func(ctx context.Context, host string) ([]netip.Addr, error) {
					r.lookups.Add(1)
					if answers.Add(1) == 1 {
						return addrs("93.184.215.14"), nil
					}
					return addrs("127.0.0.1"), nil
				},
				Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
					r.dialsMu.Lock()
					r.dials = append(r.dials, addr)
					r.dialsMu.Unlock()
					if addr != "93.184.215.14:443" && addr != "93.184.215.14:80" {
						return nil, fmt.Errorf("dial to %s, not the checked address", addr)
					}
					return d.DialContext(ctx, network, up.Listener.Addr().String())
				},
			})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			r.px.Serve(ln)
			r.addr = ln.Addr().String()
			defer r.px.Close()
			port := map[string]string{"connect": "443", "http": "80"}[mode]
			if status, body := r.request(t, mode, "rebind.example.test", port); status != http.StatusOK || body != "upstream" {
				t.Errorf("%d %q, want 200 upstream", status, body)
			}
			if n := r.lookups.Load(); n != 1 {
				t.Errorf("%d lookups for one request, want 1", n)
			}
			if d := r.dialed(); len(d) != 1 || d[0] != "93.184.215.14:"+port {
				t.Errorf("dials %v, want [93.184.215.14:%s]", d, port)
			}
		})
	}
}

// A name that does not resolve is a 502, logged, and no denial: the
// allow-list has nothing to change.
func TestProxyLookupFails(t *testing.T) {
	up := newUpstream(t)
	r := newProxyRig(t, []string{"gone.example.test"}, nil, up, true)
	status, body := r.connect(t, "gone.example.test:443")
	if status != http.StatusBadGateway || !strings.Contains(body, "no such host") {
		t.Errorf("%d %q, want 502", status, body)
	}
	log := r.px.Log()
	if len(log) != 1 || log[0].Allowed || log[0].Refused != FailedLookup {
		t.Errorf("the log: %+v", log)
	}
	if ds := Denials(Policy{Network: config.NetworkDomains}, config.Sandbox{}, nil, log); len(ds) != 0 {
		t.Errorf("denials of a failed lookup: %+v", ds)
	}
}

// Each refusal gets the one-line fix that would allow it.
func TestDenialsOfProxyRefusals(t *testing.T) {
	b := config.Sandbox{Network: config.NetworkDomains, AllowedDomains: []string{"registry.npmjs.org"}}
	for _, tc := range []struct {
		name     string
		dec      Decision
		what     string
		fix, why string
	}{
		{"name", Decision{Host: "api.github.com", Port: "443", Refused: RefusedName},
			"api.github.com", `"sandbox":{"network":{"allowedDomains":["registry.npmjs.org","api.github.com"]}}`, "not in its allowedDomains"},
		{"name on another port", Decision{Host: "api.github.com", Port: "8443", Refused: RefusedName},
			"api.github.com:8443", `"sandbox":{"network":{"allowedDomains":["registry.npmjs.org","api.github.com:8443"]}}`, "not in its allowedDomains"},
		{"port", Decision{Host: "registry.npmjs.org", Port: "8443", Refused: RefusedPort, Why: "port 8443 is not allowed"},
			"registry.npmjs.org:8443", `"sandbox":{"network":{"allowedDomains":["registry.npmjs.org","registry.npmjs.org:8443"]}}`, "port 8443 is not allowed"},
		{"address", Decision{Host: "registry.npmjs.org", Port: "443", Refused: RefusedAddress, Addrs: addrs("104.16.0.1", "10.0.0.5"),
			Why: "resolves to 10.0.0.5, a private address"},
			"registry.npmjs.org", `"sandbox":{"network":{"allowedDomains":["registry.npmjs.org","10.0.0.5"]}}`, "resolves to 10.0.0.5, a private address"},
		{"address on another port", Decision{Host: "db.internal.example", Port: "5432", Refused: RefusedAddress, Addrs: addrs("::1"),
			Why: "resolves to ::1, a loopback address"},
			"db.internal.example", `"sandbox":{"network":{"allowedDomains":["registry.npmjs.org","[::1]:5432"]}}`, "a loopback address"},
		{"an address named", Decision{Host: "127.0.0.1", Port: "5432", Refused: RefusedName, Addrs: addrs("127.0.0.1")},
			"127.0.0.1:5432", `"sandbox":{"network":{"allowedDomains":["registry.npmjs.org","127.0.0.1:5432"]}}`, "not in its allowedDomains"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := Denials(Policy{Network: config.NetworkDomains}, b, nil, []Decision{tc.dec})
			if len(ds) != 1 {
				t.Fatalf("denials: %+v", ds)
			}
			if ds[0].What != tc.what || ds[0].Fix != tc.fix || !strings.Contains(ds[0].Why, tc.why) {
				t.Errorf("denial %+v, want what %q, fix %s, why saying %q", ds[0], tc.what, tc.fix, tc.why)
			}
		})
	}
}

func TestNonPublic(t *testing.T) {
	for addr, want := range map[string]string{
		"93.184.215.14": "", "2606:4700::6810:1": "", "64:ff9b::5db8:d70e": "", "2002:5db8:d70e::1": "",
		"127.0.0.1": "a loopback address", "127.8.9.10": "a loopback address", "::1": "a loopback address",
		"::ffff:127.0.0.1": "a loopback address", "64:ff9b::7f00:1": "a loopback address", "2002:7f00:1::1": "a loopback address",
		"169.254.169.254": "a link-local address", "fe80::1": "a link-local address",
		"10.0.0.1": "a private address", "172.16.0.1": "a private address", "192.168.0.1": "a private address",
		"fc00::1": "a private address", "fd12:3456::1": "a private address",
		"100.64.0.1": "a private address (carrier-grade NAT)", "100.127.255.254": "a private address (carrier-grade NAT)",
		"0.0.0.0": "an unspecified address", "::": "an unspecified address",
		"224.0.0.1": "a multicast address", "ff02::1": "a multicast address",
		"0.1.2.3": "an address that is not globally routable", "192.0.2.1": "an address that is not globally routable",
		"198.18.0.1": "an address that is not globally routable", "240.0.0.1": "an address that is not globally routable",
		"255.255.255.255": "an address that is not globally routable", "2001:db8::1": "an address that is not globally routable",
		"::127.0.0.1": "an address that is not globally routable", "fec0::1": "an address that is not globally routable",
		"100::1": "an address that is not globally routable",
	} {
		if got := nonPublic(netip.MustParseAddr(addr)); got != want {
			t.Errorf("nonPublic(%s) = %q, want %q", addr, got, want)
		}
	}
}
