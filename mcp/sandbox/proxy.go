package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"time"
)

// Decision is one request the proxy let through or refused.
type Decision struct {
	Time    time.Time
	Host    string // as the server named it, lower case
	Port    string
	Allowed bool
}

// logSize bounds the decisions a Proxy keeps.
const logSize = 256

// ProxyOptions are a Proxy's options; nil means the defaults.
type ProxyOptions struct {
	// Dial makes the proxy's outgoing connections; nil is a net.Dialer's.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// OnDecision, if set, is told of each decision, on the request's
	// goroutine.
	OnDecision func(Decision)
}

// Proxy is an HTTP proxy (CONNECT, and plain HTTP with absolute URLs)
// that lets a sandboxed server reach the domains of its allow-list and
// nothing else, and logs each decision.
type Proxy struct {
	domains []string
	opts    ProxyOptions
	srv     *http.Server
	rp      *httputil.ReverseProxy
	wg      sync.WaitGroup

	// logMu guards log.
	logMu sync.Mutex
	log   []Decision

	// tunnelsMu guards tunnels: the CONNECT tunnels open now, which the
	// http.Server no longer tracks once they are hijacked.
	tunnelsMu sync.Mutex
	tunnels   map[net.Conn]net.Conn // the server's end: the far end
	closed    bool
}

// NewProxy returns a proxy to the domains of the allow-list: a host name
// matches itself, "*.example.com" the names below example.com.
func NewProxy(domains []string, opts *ProxyOptions) *Proxy {
	p := &Proxy{domains: domains, tunnels: map[net.Conn]net.Conn{}}
	if opts != nil {
		p.opts = *opts
	}
	if p.opts.Dial == nil {
		p.opts.Dial = (&net.Dialer{Timeout: 30 * time.Second}).DialContext
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL = r.In.URL; r.Out.Host = r.In.Host },
		Transport: &http.Transport{
			DialContext: p.opts.Dial, Proxy: nil, MaxIdleConns: 4, IdleConnTimeout: 30 * time.Second,
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

// Allowed reports whether host matches the allow-list domains.
func Allowed(domains []string, host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, d := range domains {
		if sub, ok := strings.CutPrefix(d, "*."); ok {
			if strings.HasSuffix(host, "."+sub) {
				return true
			}
		} else if host == d {
			return true
		}
	}
	return false
}

func (p *Proxy) decide(host, port string) bool {
	d := Decision{Time: time.Now(), Host: strings.ToLower(host), Port: port, Allowed: Allowed(p.domains, host)}
	p.logMu.Lock()
	if len(p.log) == logSize {
		p.log = append(p.log[:0], p.log[1:]...)
	}
	p.log = append(p.log, d)
	p.logMu.Unlock()
	if p.opts.OnDecision != nil {
		p.opts.OnDecision(d)
	}
	return d.Allowed
}

func (p *Proxy) refuse(w http.ResponseWriter, host string) {
	http.Error(w, fmt.Sprintf("FreeCode sandbox: %s is not in this server's allowedDomains", host), http.StatusForbidden)
}

// ServeHTTP tunnels a CONNECT to an allowed host, forwards a plain HTTP
// request to one, and refuses anything else with 403.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		host, port, err := net.SplitHostPort(r.Host)
		if err != nil {
			http.Error(w, "CONNECT wants host:port", http.StatusBadRequest)
			return
		}
		if !p.decide(host, port) {
			p.refuse(w, host)
			return
		}
		up, err := p.opts.Dial(r.Context(), "tcp", r.Host)
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
	port := r.URL.Port()
	if port == "" {
		port = "80"
	}
	if !p.decide(r.URL.Hostname(), port) {
		p.refuse(w, r.URL.Hostname())
		return
	}
	p.rp.ServeHTTP(w, r)
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
