package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// logSize bounds the decisions a Proxy keeps.
const logSize = 256

// dialTimeout bounds the connection to the addresses of one request.
const dialTimeout = 30 * time.Second

// ProxyOptions are a Proxy's options; nil means the defaults.
type ProxyOptions struct {
	// Dial makes the proxy's outgoing connections, always to an address
	// it checked ("ip:port"); nil is a net.Dialer's.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// LookupIP resolves a host name, once per request; nil is
	// net.DefaultResolver's LookupNetIP.
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// OnDecision, if set, is told of each decision, on the request's
	// goroutine.
	OnDecision func(Decision)
}

// Proxy is an HTTP proxy (CONNECT, and plain HTTP with absolute URLs)
// that lets a sandboxed server reach the hosts of its allow-list and
// nothing else, and logs each decision.
//
// A request names a host and a port. A name must be one an entry of the
// allow-list names, on a port the entry allows (80 and 443 unless it
// names one); the proxy then resolves it, once, and every address it
// resolves to must be public or itself listed on that port: a name that
// leads to the host's loopback, a private network or the clouds'
// metadata address is refused. An address the server names must be
// listed. The proxy connects to the addresses it checked, never to the
// name again, so a second answer from DNS cannot change where it goes.
type Proxy struct {
	allow allowList
	opts  ProxyOptions
	srv   *http.Server
	rp    *httputil.ReverseProxy
	wg    sync.WaitGroup

	// logMu guards log.
	logMu sync.Mutex
	log   []Decision

	// tunnelsMu guards tunnels: the CONNECT tunnels open now, which the
	// http.Server no longer tracks once they are hijacked.
	tunnelsMu sync.Mutex
	tunnels   map[net.Conn]net.Conn // the server's end: the far end
	closed    bool
}

// NewProxy returns a proxy to the hosts of the allow-list domains, whose
// entries are as config.ParseAllowedDomain reads them.
func NewProxy(domains []string, opts *ProxyOptions) *Proxy {
	p := &Proxy{allow: parseAllowList(domains), tunnels: map[net.Conn]net.Conn{}}
	if opts != nil {
		p.opts = *opts
	}
	if p.opts.Dial == nil {
		p.opts.Dial = (&net.Dialer{Timeout: dialTimeout}).DialContext
	}
	if p.opts.LookupIP == nil {
		p.opts.LookupIP = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL = r.In.URL; r.Out.Host = r.In.Host },
		Transport: &http.Transport{
			DialContext: p.dialChecked, Proxy: nil, MaxIdleConns: 4, IdleConnTimeout: 30 * time.Second,
		},
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	return p
}

// Serve serves the proxy on ln until Close.
func (p *Proxy) Serve(ln net.Listener) {
	p.wg.Go(func() { _ = p.srv.Serve(ln) })
}

// Close stops the proxy and the connections it carries, and waits.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	p.tunnelsMu.Lock()
	p.closed = true
	for c, up := range p.tunnels {
		c.Close()
		up.Close()
	}
	p.tunnelsMu.Unlock()
	p.wg.Wait()
	return err
}

// track adds the tunnel from c to up, or says false once the proxy closed.
func (p *Proxy) track(c, up net.Conn) bool {
	p.tunnelsMu.Lock()
	defer p.tunnelsMu.Unlock()
	if p.closed {
		return false
	}
	p.tunnels[c] = up
	p.wg.Add(1)
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.tunnelsMu.Lock()
	delete(p.tunnels, c)
	p.tunnelsMu.Unlock()
	p.wg.Done()
}

// Log returns the decisions made so far, oldest first (the last logSize).
func (p *Proxy) Log() []Decision {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	return append([]Decision(nil), p.log...)
}

// decide checks a request for host:port, and logs it.
func (p *Proxy) decide(ctx context.Context, host string, port uint16) Decision {
	d := p.check(ctx, host, port)
	p.logMu.Lock()
	if len(p.log) == logSize {
		p.log = append(p.log[:0], p.log[1:]...)
	}
	p.log = append(p.log, d)
	p.logMu.Unlock()
	if p.opts.OnDecision != nil {
		p.opts.OnDecision(d)
	}
	return d
}

// dial connects to one of the addresses d checked, in turn, leaving each
// its share of the time left (2s at least), as net.Dialer does for the
// addresses of a name.
func (p *Proxy) dial(ctx context.Context, d Decision) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	var errs []error
	for i, a := range d.Addrs {
		share := max(time.Until(deadline)/time.Duration(len(d.Addrs)-i), 2*time.Second)
		actx, acancel := context.WithTimeout(ctx, share)
		c, err := p.opts.Dial(actx, "tcp", net.JoinHostPort(a.String(), d.Port))
		acancel()
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// checkedKey carries a plain HTTP request's Decision to dialChecked.
type checkedKey struct{}

// dialChecked is the ReverseProxy's dial: to the addresses that the
// request's Decision checked, which must be for addr. (A connection the
// Transport keeps for the next request to the same host and port went to
// an address checked for that name too.)
func (p *Proxy) dialChecked(ctx context.Context, network, addr string) (net.Conn, error) {
	d, ok := ctx.Value(checkedKey{}).(Decision)
	host, port, _ := net.SplitHostPort(addr)
	if !ok || !d.Allowed || !strings.EqualFold(strings.TrimSuffix(host, "."), d.Host) || port != d.Port {
		return nil, fmt.Errorf("sandbox: the proxy did not check %s", addr)
	}
	return p.dial(ctx, d)
}

// ServeHTTP tunnels a CONNECT to an allowed host, forwards a plain HTTP
// request to one, and refuses anything else with 403 (502 for a name
// that does not resolve), saying why.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		host, ps, err := net.SplitHostPort(r.Host)
		port, ok := parsePort(ps)
		if err != nil || !ok {
			http.Error(w, "CONNECT wants host:port", http.StatusBadRequest)
			return
		}
		d := p.decide(r.Context(), host, port)
		if !d.Allowed {
			refuse(w, d)
			return
		}
		up, err := p.dial(r.Context(), d)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			up.Close()
			return
		}
		if !p.track(conn, up) {
			conn.Close()
			up.Close()
			return
		}
		defer p.untrack(conn)
		if _, err := conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
			conn.Close()
			up.Close()
			return
		}
		splice(&bufferedConn{Conn: conn, r: brw.Reader}, up)
		return
	}
	if !r.URL.IsAbs() || r.URL.Scheme != "http" {
		http.Error(w, "FreeCode sandbox: a proxy request wants an absolute http:// URL, or CONNECT", http.StatusBadRequest)
		return
	}
	ps := r.URL.Port()
	if ps == "" {
		ps = "80"
	}
	port, ok := parsePort(ps)
	if !ok {
		http.Error(w, "FreeCode sandbox: a proxy request wants a port from 1 to 65535", http.StatusBadRequest)
		return
	}
	d := p.decide(r.Context(), r.URL.Hostname(), port)
	if !d.Allowed {
		refuse(w, d)
		return
	}
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), checkedKey{}, d)))
}

// bufferedConn reads what the hijacked connection's reader had buffered
// before the connection itself.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

func (c *bufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}
