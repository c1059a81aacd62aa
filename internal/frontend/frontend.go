// Package frontend is a Go client of freecode-serve's protocol: what the
// sidecar's tests drive it with, what the CLI's live commands and the demo
// frontend are built on. A Client speaks to one sidecar over a pipe (a
// sidecar it started, or one in the same process) or a local socket (Dial,
// or DialServeFile, which finds a listening sidecar by its serve.json and
// presents its token once the listener proved it holds it). It offers a typed call per request of the
// protocol, delivers the sidecar's notifications in order to a callback,
// and answers its requests (permission prompts, elicitation, sampling,
// window/showDocument) with handlers.
package frontend

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/coder/websocket"
	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/freecode/freecode/internal/protocol"
)

// Options configure a Client. A nil *Options means defaults.
type Options struct {
	// ClientName is what initialize reports as clientInfo.name (default
	// "freecode-frontend").
	ClientName string
	// Folders are the workspace folders initialize sends, as paths. With
	// stdio the first is the project; all are MCP roots.
	Folders []string
	// ConfigPath is initializationOptions.configPath.
	ConfigPath string
	// Token is initializationOptions.token; DialServeFile fills it in.
	Token string
	// OnPermission answers freecode/permission/request. Nil means the
	// Client does not implement it, which the sidecar counts as deny.
	// It runs on a goroutine of its own; ctx ends when the sidecar gives
	// up on the answer (the call's deadline) or the connection ends.
	OnPermission func(ctx context.Context, req *protocol.PermissionRequest) (*protocol.PermissionResponse, error)
	// OnElicitation answers freecode/elicitation/request: an MCP server
	// asks the user, during one of this Client's calls, to fill in a form
	// or open a URL. OnSampling answers freecode/sampling/request: an MCP
	// server asks for a completion of the Client's model; an error refuses
	// it (a *jsonrpc2.Error reaches the server with its code and message).
	// Each runs on a goroutine of its own, like OnPermission. Setting one
	// declares it in initialize (initializationOptions.capabilities),
	// unless Capabilities says otherwise; the sidecar asks nothing the
	// Client did not declare.
	OnElicitation func(ctx context.Context, req *protocol.ElicitationRequest) (*protocol.ElicitationResponse, error)
	OnSampling    func(ctx context.Context, req *protocol.SamplingRequest) (*protocol.SamplingResult, error)
	// OnShowDocument answers LSP's window/showDocument, which the sidecar
	// sends to have a sign-in page opened in the user's browser. Setting
	// it declares window.showDocument support in initialize.
	OnShowDocument func(ctx context.Context, p *lsp.ShowDocumentParams) (*lsp.ShowDocumentResult, error)
	// Capabilities, if set, is sent as initializationOptions.capabilities
	// in place of what the handlers set declare.
	Capabilities *protocol.ClientCapabilities
	// OnRequest answers any other request of the sidecar. Nil means
	// method not found.
	OnRequest func(ctx context.Context, method string, params json.RawMessage) (any, error)
	// OnNotification is called for every notification of the sidecar, in
	// the order they came, one at a time, on a goroutine of its own: it
	// may block without holding up the connection. Nil drops them.
	OnNotification func(Notification)
	// Trace, if set, is given every message sent and received.
	Trace func(dir protocol.Direction, body []byte)
}

// Notification is one notification of the sidecar.
type Notification struct {
	Method string
	Params json.RawMessage
}

// Decode decodes the params into v: a type of internal/protocol, or of
// go.lsp.dev/protocol for window/logMessage.
func (n Notification) Decode(v any) error {
	return protocol.Codec{}.Unmarshal(n.Params, v)
}

// Client is a connection to one sidecar. Its methods are safe for
// concurrent use.
type Client struct {
	opts   Options
	rwc    io.Closer
	conn   jsonrpc2.Conn
	cancel context.CancelFunc
	queue  *queue
	wg     sync.WaitGroup
	reqs   protocol.Requests
}

// New returns a Client over rwc, reading already; call Initialize next.
// Close it when done.
func New(rwc io.ReadWriteCloser, opts *Options) *Client {
	return newClient(rwc, opts, func(o *protocol.StreamOptions) jsonrpc2.Conn { return protocol.NewConn(rwc, o) })
}

// NewWebSocket returns a Client over a WebSocket that carries one message
// per text frame, as a browser's does (protocol.NewMessageStream).
func NewWebSocket(c *websocket.Conn, opts *Options) *Client {
	return newClient(webSocketCloser{c}, opts, func(o *protocol.StreamOptions) jsonrpc2.Conn { return protocol.NewMessageConn(c, o) })
}

type webSocketCloser struct{ c *websocket.Conn }

func (w webSocketCloser) Close() error { return w.c.CloseNow() }

func newClient(rwc io.Closer, opts *Options, newConn func(*protocol.StreamOptions) jsonrpc2.Conn) *Client {
	c := &Client{rwc: rwc, queue: newQueue()}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.ClientName == "" {
		c.opts.ClientName = "freecode-frontend"
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.conn = newConn(&protocol.StreamOptions{Trace: c.opts.Trace, AfterWrite: func(err error) {
		if err != nil {
			c.reqs.CancelAll() // the sidecar can be answered no more
		}
	}})
	c.conn.Go(ctx, c.handle)
	c.wg.Go(c.deliver)
	return c
}

// ErrNoSidecar means no sidecar listens: serve.json is missing, or names
// a sidecar that does not answer.
var ErrNoSidecar = errors.New("no sidecar is listening")

// ErrNotSidecar means the listener did not prove that it holds the token
// (freecode/challenge): it is not the sidecar whose token the Client has,
// maybe a program that took the address of one that was killed. Nothing
// but the challenge was sent to it.
var ErrNotSidecar = errors.New("the listener is not the sidecar: it does not prove it holds the token")

// Dial connects to the sidecar listening on addr ("unix:PATH",
// "tcp:HOST:PORT" or "ws://HOST:PORT", as --listen and serve.json spell
// it). On ws: it connects as a program, not a browser: with no Origin and
// no cookie, so it presents the token as on a socket.
func Dial(ctx context.Context, addr string, opts *Options) (*Client, error) {
	if strings.HasPrefix(addr, "ws://") {
		return DialWebSocket(ctx, strings.TrimSuffix(addr, "/")+"/rpc", nil, opts)
	}
	network, address, ok := strings.Cut(addr, ":")
	if !ok || network != "unix" && network != "tcp" {
		return nil, fmt.Errorf("sidecar address %q: want unix:PATH, tcp:HOST:PORT or ws://HOST:PORT", addr)
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %w", ErrNoSidecar, addr, err)
	}
	return New(nc, opts), nil
}

// DialWebSocket connects to the WebSocket at url (ws://HOST:PORT/rpc)
// with the handshake's extra header (a browser's Origin and Cookie, say).
// A handshake the sidecar refuses is an error with its status and text.
func DialWebSocket(ctx context.Context, url string, header http.Header, opts *Options) (*Client, error) {
	c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		HTTPHeader: header,
		// Loopback: never through a proxy of the environment.
		HTTPClient: &http.Client{Transport: &http.Transport{Proxy: nil}},
	})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			resp.Body.Close()
			return nil, fmt.Errorf("%s refused the WebSocket: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
		}
		return nil, fmt.Errorf("%w at %s: %w", ErrNoSidecar, url, err)
	}
	return NewWebSocket(c, opts), nil
}

// DialServeFile connects to the sidecar that path names, with its token
// (path "" means ~/.freecode/serve.json).
func DialServeFile(ctx context.Context, path string, opts *Options) (*Client, error) {
	if path == "" {
		var err error
		if path, err = protocol.DefaultServeFilePath(); err != nil {
			return nil, err
		}
	}
	sf, err := protocol.ReadServeFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: there is no %s", ErrNoSidecar, path)
	}
	if err != nil {
		return nil, err
	}
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.Token = sf.Token
	return Dial(ctx, sf.Address, &o)
}

// Close ends the connection at once: what the sidecar still does for this
// Client is cancelled, a prompt in progress is answered deny by the
// sidecar. It waits for the Client's goroutines.
func (c *Client) Close() error {
	c.cancel()
	c.rwc.Close()
	err := c.conn.Close()
	c.queue.close()
	c.wg.Wait()
	if errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.ErrClosedPipe) {
		err = nil
	}
	return err
}

// Done is closed when the connection has ended, on either side.
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }

// handle answers the sidecar's requests and queues its notifications.
func (c *Client) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	if req.Method() == protocol.MethodCancelRequest {
		c.reqs.Cancel(req.Params())
		return nil, nil
	}
	if !req.IsCall() {
		c.queue.push(Notification{Method: strings.Clone(req.Method()), Params: bytes.Clone(req.Params())})
		return nil, nil
	}
	switch {
	case req.Method() == protocol.MethodPermissionRequest && c.opts.OnPermission != nil:
		return answer(c, ctx, req, c.opts.OnPermission)
	case req.Method() == protocol.MethodElicitationRequest && c.opts.OnElicitation != nil:
		return answer(c, ctx, req, c.opts.OnElicitation)
	case req.Method() == protocol.MethodSamplingRequest && c.opts.OnSampling != nil:
		return answer(c, ctx, req, c.opts.OnSampling)
	case req.Method() == protocol.MethodShowDocument && c.opts.OnShowDocument != nil:
		return answer(c, ctx, req, func(ctx context.Context, p *rawShowDocument) (*lsp.ShowDocumentResult, error) {
			return c.opts.OnShowDocument(ctx, &lsp.ShowDocumentParams{URI: uri.URI(p.URI), External: p.External, TakeFocus: p.TakeFocus})
		})
	case c.opts.OnRequest != nil:
		ctx, done := c.reqs.Detach(ctx, req)
		defer done()
		return c.opts.OnRequest(ctx, req.Method(), bytes.Clone(req.Params()))
	}
	return nil, fmt.Errorf("%q: %w", req.Method(), jsonrpc2.ErrMethodNotFound)
}

// rawShowDocument is window/showDocument's params with the URI as sent:
// go.lsp.dev's decoder would rewrite it to vscode-uri's canonical form,
// which percent-encodes the = and & of a query, and a sign-in URL is all
// query.
type rawShowDocument struct {
	URI       string `json:"uri"`
	External  *bool  `json:"external,omitempty"`
	TakeFocus *bool  `json:"takeFocus,omitempty"`
}

// answer decodes a request of the sidecar's into P and has h answer it.
// The user may take a while: the read loop goes on meanwhile, and ctx ends
// when the sidecar sends $/cancelRequest for it.
func answer[P, R any](c *Client, ctx context.Context, req *jsonrpc2.Request, h func(context.Context, *P) (R, error)) (any, error) {
	ctx, done := c.reqs.Detach(ctx, req)
	defer done()
	var p P
	if err := (protocol.Codec{}).Unmarshal(req.Params(), &p); err != nil {
		return nil, jsonrpc2.NewError(protocol.CodeInvalidParams, err.Error())
	}
	return h(ctx, &p)
}

// deliver hands the notifications to OnNotification, in order.
func (c *Client) deliver() {
	for {
		n, ok := c.queue.pop()
		if !ok {
			return
		}
		if c.opts.OnNotification != nil {
			c.opts.OnNotification(n)
		}
	}
}

// Call sends a request and decodes its result into result (nil: drop
// it). When ctx ends first, the sidecar is sent $/cancelRequest. A
// JSON-RPC error comes back as a *jsonrpc2.Error, with its code.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	return lsp.Call(ctx, c.conn, method, params, result)
}

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	return c.conn.Notify(ctx, method, params)
}

// Initialize sends initialize, with the Options' folders, config path and
// token, then initialized. With a token, the listener must first prove it
// holds it (freecode/challenge), or the error is ErrNotSidecar and the
// token is not sent.
func (c *Client) Initialize(ctx context.Context) (*protocol.InitializeResult, error) {
	if c.opts.Token != "" {
		if err := c.challenge(ctx); err != nil {
			return nil, err
		}
	}
	caps := c.opts.Capabilities
	if caps == nil {
		caps = &protocol.ClientCapabilities{Elicitation: c.opts.OnElicitation != nil, Sampling: c.opts.OnSampling != nil}
	}
	opts, err := json.Marshal(protocol.InitializationOptions{ConfigPath: c.opts.ConfigPath, Token: c.opts.Token, Capabilities: caps})
	if err != nil {
		return nil, err
	}
	pid := int32(os.Getpid())
	p := &lsp.InitializeParams{
		ProcessID:             &pid,
		ClientInfo:            lsp.ClientInfo{Name: c.opts.ClientName},
		InitializationOptions: opts,
	}
	if c.opts.OnShowDocument != nil {
		p.Capabilities.Window = &lsp.WindowClientCapabilities{ShowDocument: &lsp.ShowDocumentClientCapabilities{Support: true}}
	}
	p.WorkspaceFolders = lsp.NewNullable(folders(c.opts.Folders))
	var res protocol.InitializeResult
	if err := c.Call(ctx, protocol.MethodInitialize, p, &res); err != nil {
		return nil, err
	}
	if err := c.Notify(ctx, protocol.MethodInitialized, &lsp.InitializedParams{}); err != nil {
		return nil, err
	}
	return &res, nil
}

// challenge has the listener prove it holds the Client's token, with a
// nonce of the Client's so that no answer recorded earlier serves.
func (c *Client) challenge(ctx context.Context) error {
	b := make([]byte, 32)
	rand.Read(b)
	nonce := hex.EncodeToString(b)
	var res protocol.ChallengeResult
	if err := c.Call(ctx, protocol.MethodChallenge, &protocol.ChallengeParams{Nonce: nonce}, &res); err != nil {
		if ctx.Err() != nil {
			return err
		}
		// What an impostor answers is not shown: it is its text.
		return fmt.Errorf("%w (it answers %s with an error)", ErrNotSidecar, protocol.MethodChallenge)
	}
	if !protocol.ProofHolds(c.opts.Token, nonce, res.Proof) {
		return ErrNotSidecar
	}
	return nil
}

// folders returns paths as LSP workspace folders.
func folders(paths []string) []lsp.WorkspaceFolder {
	out := make([]lsp.WorkspaceFolder, 0, len(paths))
	for _, p := range paths {
		out = append(out, lsp.WorkspaceFolder{URI: uri.File(p), Name: filepath.Base(p)})
	}
	return out
}

// ChangeFolders sends workspace/didChangeWorkspaceFolders.
func (c *Client) ChangeFolders(ctx context.Context, added, removed []string) error {
	return c.Notify(ctx, protocol.MethodDidChangeWorkspaceFolders, &lsp.DidChangeWorkspaceFoldersParams{
		Event: lsp.WorkspaceFoldersChangeEvent{Added: folders(added), Removed: folders(removed)},
	})
}

// Shutdown sends shutdown: the sidecar stops every MCP server.
func (c *Client) Shutdown(ctx context.Context) error {
	return c.Call(ctx, protocol.MethodShutdown, nil, nil)
}

// Exit sends exit: a stdio sidecar ends.
func (c *Client) Exit(ctx context.Context) error {
	return c.Notify(ctx, protocol.MethodExit, nil)
}
