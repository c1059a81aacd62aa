package mcpserve

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcpwire"
)

// Path is where Handler serves Streamable HTTP.
const Path = "/mcp"

// SSEPath is where Handler serves the legacy HTTP+SSE transport
// (2024-11-05): a GET opens the event stream, whose first event names the
// endpoint the client POSTs its messages to (SSEPath?sessionid=…).
const SSEPath = "/sse"

// sessionTimeout closes an HTTP session that has seen no request for this
// long: a client that went away without DELETE would otherwise hold its
// session forever. A client that comes back gets 404 and, as the spec
// says it must, starts a new session.
const sessionTimeout = 30 * time.Minute

// HTTPOptions configures Handler.
type HTTPOptions struct {
	// Addr is the address the listener is bound to (its Addr()): the Host
	// header is checked against it.
	Addr net.Addr
	// Token is the bearer token every request must carry. "" serves
	// without one, which Handler allows on a loopback address only.
	Token string
}

// Handler returns the HTTP handler of the server: Streamable HTTP at Path
// and the legacy HTTP+SSE transport at SSEPath, both behind the Host,
// Origin and token checks described in the package documentation. Nothing
// else is served.
func (s *Server) Handler(opts HTTPOptions) (http.Handler, error) {
	g, err := newGuard(opts)
	if err != nil {
		return nil, err
	}
	streamable := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return s.mcp }, &mcpsdk.StreamableHTTPOptions{
		Logger:         s.logger,
		SessionTimeout: sessionTimeout,
	})
	stateless := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return s.mcp }, &mcpsdk.StreamableHTTPOptions{
		Logger:    s.logger,
		Stateless: true,
		// The POST is the whole request in 2026-07-28: a client that
		// hangs up cancels its call.
		PropagateRequestCancellation: true,
	})
	sse := mcpsdk.NewSSEHandler(func(*http.Request) *mcpsdk.Server { return s.mcp }, nil)
	g.next = mcpwire.RoutingHeaders(&mcpwire.RevisionRouter{Stateful: streamable, Stateless: stateless})
	sg := *g // the same checks in front of the legacy transport
	sg.next = sse
	mux := http.NewServeMux()
	mux.Handle(Path, g)
	mux.Handle(SSEPath, &sg)
	return mux, nil
}

// Guard returns next behind the checks Handler puts in front of the MCP
// server: Host, Origin and, when opts.Token is set, the bearer token. The
// sidecar's gateway (one path per FreeCode server) checks every request so
// before it looks at the path.
func Guard(next http.Handler, opts HTTPOptions) (http.Handler, error) {
	g, err := newGuard(opts)
	if err != nil {
		return nil, err
	}
	g.next = next
	return g, nil
}

// newGuard returns the checks opts asks for, with no next handler yet.
func newGuard(opts HTTPOptions) (*guard, error) {
	bound, err := netip.ParseAddrPort(opts.Addr.String())
	if err != nil {
		return nil, fmt.Errorf("serving MCP over HTTP: listener address %q: %w", opts.Addr, err)
	}
	if opts.Token == "" && !bound.Addr().IsLoopback() {
		return nil, fmt.Errorf("serving MCP over HTTP without a token is allowed on a loopback address only, not %s", bound)
	}
	g := &guard{bound: bound}
	if opts.Token != "" {
		sum := sha256.Sum256([]byte(opts.Token))
		g.tokenSum = &sum
	}
	return g, nil
}

// guard checks Host, Origin and the token before a request reaches the
// MCP handler.
type guard struct {
	bound    netip.AddrPort
	tokenSum *[sha256.Size]byte // nil: no token required
	next     http.Handler
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hostAllowed(r.Host) {
		http.Error(w, fmt.Sprintf("Forbidden: Host %q is not this server's address", r.Host), http.StatusForbidden)
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && !loopbackOrigin(origin) {
		http.Error(w, "Forbidden: only a loopback Origin may use this server", http.StatusForbidden)
		return
	}
	if g.tokenSum != nil {
		token, ok := bearer(r.Header.Get("Authorization"))
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="freecode"`)
			http.Error(w, "Unauthorized: send the server's token as \"Authorization: Bearer <token>\" (freecode mcp serve keeps it in mcp-serve.json)", http.StatusUnauthorized)
			return
		}
		// Hashing first makes the comparison take the same time whatever
		// the length of what was sent.
		sum := sha256.Sum256([]byte(token))
		if subtle.ConstantTimeCompare(sum[:], g.tokenSum[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="freecode", error="invalid_token"`)
			http.Error(w, "Unauthorized: wrong token", http.StatusUnauthorized)
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

// bearer returns the token of an Authorization header of the Bearer scheme
// (whose name is case-insensitive).
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// hostAllowed reports whether a request's Host names this server. On a
// loopback bind that is the bound address or "localhost", with the bound
// port: a DNS-rebinding page reaches the listener under its own host
// name, which is refused. On another bind (allowed explicitly, and always
// with a token) the machine may have any number of names, and the token
// is what keeps other pages out.
func (g *guard) hostAllowed(host string) bool {
	if !g.bound.Addr().IsLoopback() {
		return true
	}
	name, portText, err := net.SplitHostPort(host)
	if err != nil {
		name, portText = host, "80" // no port: the scheme's default
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || uint16(port) != g.bound.Port() {
		return false
	}
	if strings.EqualFold(name, "localhost") {
		return true
	}
	addr, err := netip.ParseAddr(strings.Trim(name, "[]"))
	return err == nil && addr.Unmap() == g.bound.Addr().Unmap()
}

// loopbackOrigin reports whether a browser Origin is a page served from
// this machine's loopback: localhost, 127.0.0.0/8 or ::1, over http or
// https.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" {
		return false
	}
	name := u.Hostname()
	if strings.EqualFold(name, "localhost") {
		return true
	}
	addr, err := netip.ParseAddr(name)
	return err == nil && addr.Unmap().IsLoopback()
}
