package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/mcpserve"
	"github.com/freecode/freecode/workspace"
)

// The gateway serves an editor's own chat (VS Code's) from the sidecar's
// workspace: one MCP endpoint per FreeCode server, each an mcpserve.Server
// of that server alone (its tools under their own names, every call
// through the workspace's rules), on one loopback HTTP listener behind one
// bearer token. Before it, VS Code ran `freecode mcp serve --stdio`: a
// second workspace that started a second copy of every server, and listed
// their tools flat under one server as mcp__<server>__<tool>.

// gatewayPathPrefix is where a FreeCode server's endpoint is:
// /mcp/<its name, path-escaped>.
const gatewayPathPrefix = "/mcp/"

// gatewayShutdownGrace is how long Close lets requests in flight end
// before it cuts their connections.
const gatewayShutdownGrace = 2 * time.Second

// gateway is the listener and its endpoints. The first
// freecode/gateway/open starts it; it closes before the workspace does.
type gateway struct {
	ws     *workspace.Workspace
	logger *slog.Logger
	ln     net.Listener
	http   *http.Server
	token  string
	base   string // http://127.0.0.1:PORT
	opts   mcpserve.Options
	wg     sync.WaitGroup // the listener's Serve

	// endpointsMu guards endpoints and closed.
	endpointsMu sync.Mutex
	endpoints   map[string]*endpoint // by server name, made on first use
	closed      bool
}

// endpoint is one FreeCode server's MCP server and its HTTP handler.
type endpoint struct {
	srv *mcpserve.Server
	h   http.Handler
}

// startGateway listens on a free loopback port and serves w's servers
// there until Close.
func startGateway(ctx context.Context, w *workspace.Workspace, logger *slog.Logger, version string) (*gateway, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the chat gateway: %w", err)
	}
	g := &gateway{
		ws:        w,
		logger:    logger.With("gateway", ln.Addr().String()),
		ln:        ln,
		token:     mcpserve.NewToken(),
		base:      "http://" + ln.Addr().String(),
		opts:      mcpserve.Options{Logger: logger, Version: version},
		endpoints: map[string]*endpoint{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc(gatewayPathPrefix+"{name}", g.serve)
	// Every request shows the token before its path is read: a stranger
	// learns nothing of the servers' names, and makes no endpoint.
	guarded, err := mcpserve.Guard(mux, mcpserve.HTTPOptions{Addr: ln.Addr(), Token: g.token})
	if err != nil {
		ln.Close()
		return nil, err
	}
	g.http = &http.Server{Handler: guarded, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(g.logger.Handler(), slog.LevelDebug)}
	g.wg.Go(func() {
		if err := g.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			g.logger.Warn("the chat gateway stopped", "err", err)
		}
	})
	g.logger.Info("chat gateway listening")
	return g, nil
}

// serve routes a request to its server's endpoint, making it on first
// use: a server the config gained after the gateway started has its
// path at once.
func (g *gateway) serve(rw http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	ep, err := g.endpoint(name)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusNotFound)
		return
	}
	// mcpserve's handler serves Streamable HTTP at mcpserve.Path.
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = mcpserve.Path, ""
	ep.h.ServeHTTP(rw, r2)
}

// endpoint returns the endpoint of the server name, made if it is one of
// the workspace's servers.
func (g *gateway) endpoint(name string) (*endpoint, error) {
	g.endpointsMu.Lock()
	defer g.endpointsMu.Unlock()
	if g.closed {
		return nil, errors.New("the chat gateway is closed")
	}
	if ep, ok := g.endpoints[name]; ok {
		return ep, nil
	}
	known := false
	for _, st := range g.ws.Statuses() {
		known = known || st.Name == name
	}
	if !known {
		return nil, fmt.Errorf("no FreeCode server %q", name)
	}
	opts := g.opts
	opts.Server, opts.Frontend = name, "vscode-chat:"+name
	opts.Logger = slog.New(atLeast{g.opts.Logger.Handler(), slog.LevelWarn}).With("gateway", name)
	srv := mcpserve.New(g.ws, &opts)
	// The guard in front of the mux checked the token; this one checks
	// Host and Origin again, and the token, at no cost worth saving.
	h, err := srv.Handler(mcpserve.HTTPOptions{Addr: g.ln.Addr(), Token: g.token})
	if err != nil {
		srv.Close()
		return nil, err
	}
	ep := &endpoint{srv: srv, h: h}
	g.endpoints[name] = ep
	return ep, nil
}

// result is freecode/gateway/open's answer: the token and the endpoint of
// every server whose tools can come.
func (g *gateway) result() *protocol.GatewayResult {
	res := &protocol.GatewayResult{Token: g.token, Servers: []protocol.GatewayServer{}}
	for _, st := range g.ws.Statuses() {
		switch st.State {
		case mcp.StateDisabled, mcp.StateAwaitingApproval, mcp.StateBlocked:
			continue // no tool of theirs comes without the user's doing
		}
		res.Servers = append(res.Servers, protocol.GatewayServer{Name: st.Name, URL: g.base + gatewayPathPrefix + url.PathEscape(st.Name)})
	}
	return res
}

// Close stops the listener, ends the endpoints' sessions and waits for
// them. The workspace stays open.
func (g *gateway) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), gatewayShutdownGrace)
	defer cancel()
	// A chat's open GET stream never ends by itself: Shutdown waits for
	// the rest, and Close cuts what is left.
	if err := g.http.Shutdown(ctx); err != nil {
		g.http.Close()
	}
	g.wg.Wait()
	g.endpointsMu.Lock()
	g.closed = true
	eps := g.endpoints
	g.endpoints = nil
	g.endpointsMu.Unlock()
	for _, ep := range eps {
		ep.srv.Close()
	}
}

// gatewayOpen answers freecode/gateway/open: the first request starts the
// gateway, each answers its token and the servers' endpoints as they are
// now. A browser's tab may not open it: the endpoints run tools for
// whoever holds the token, and a page is no editor's chat.
func (sess *session) gatewayOpen(ctx context.Context, _ jsonrpc2.RawMessage) (any, error) {
	if sess.cookie {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, protocol.MethodGatewayOpen+": a browser frontend may not open the chat gateway")
	}
	g, err := sess.srv.openGateway(ctx)
	if err != nil {
		return nil, err
	}
	sess.logger.Info("chat gateway opened", "addr", g.ln.Addr().String())
	return g.result(), nil
}

// openGateway returns the sidecar's gateway, started if it is not yet.
// wsMu keeps it from starting while the workspace closes.
func (s *Server) openGateway(ctx context.Context) (*gateway, error) {
	s.wsMu.Lock()
	defer s.wsMu.Unlock()
	w, err := s.workspace()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	g := s.gateway
	s.mu.Unlock()
	if g != nil {
		return g, nil
	}
	g, err = startGateway(ctx, w, s.logger, s.opts.Version)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.gateway = g
	s.mu.Unlock()
	return g, nil
}

// atLeast passes on the records of level min and above: the go-sdk logs
// each session of a 2026-07-28 client, one per request, at info, which
// would bury the sidecar's log.
type atLeast struct {
	slog.Handler
	min slog.Level
}

func (h atLeast) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h atLeast) WithAttrs(as []slog.Attr) slog.Handler {
	return atLeast{h.Handler.WithAttrs(as), h.min}
}
func (h atLeast) WithGroup(name string) slog.Handler {
	return atLeast{h.Handler.WithGroup(name), h.min}
}
