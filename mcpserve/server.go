package mcpserve

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/workspace"
)

// ServerName is the name the server gives in initialize.
const ServerName = "freecode"

// protocolVersions are the MCP revisions the server speaks, newest first:
// 2026-07-28 per request (server/discover, _meta), the others by
// initialize (see the package documentation).
var protocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Options configures a Server. A nil *Options means defaults.
type Options struct {
	// Logger receives the server's logs. Nil means none.
	Logger *slog.Logger
	// Version is the serverInfo version (default "dev").
	Version string
	// StateDir, if set, is where the server keeps the key that signs the
	// requestState of its permission questions and the answers taken
	// (0600 files), so that a question outlives a restart; "" keeps them
	// in memory, and a restarted server asks again. freecode mcp serve
	// uses config.SecretsDir.
	StateDir string
	// Server, if set, makes the server one FreeCode server's: it lists
	// that server's tools alone, under the server's own names (read_file,
	// not mcp__<server>__read_file), and a call of one runs as its tool id
	// does, through the same workspace.Execute. The sidecar serves VS
	// Code's chat so, one endpoint per FreeCode server (server/gateway.go).
	Server string
	// Frontend, if set, is whose calls they are in the audit trail
	// (orchestrator.ExecOptions.Frontend); "" names each session's client,
	// "gateway:<its clientInfo.name>".
	Frontend string
}

// Server is FreeCode's MCP server over one workspace. It may serve any
// number of sessions at once, over any transports. Close it before the
// workspace.
type Server struct {
	ws     *workspace.Workspace
	server string // Options.Server: "" lists every tool under its provider name
	front  string // Options.Frontend
	mcp    *mcpsdk.Server
	logger *slog.Logger
	sub    *workspace.Subscription
	wg     sync.WaitGroup
	once   sync.Once
	calls  atomic.Uint64 // numbers the calls, for their call ids
	asks   *askStates    // the permission questions of input_required results
	listen listens       // the subscriptions/listen streams held, by client

	// toolsMu guards tools: what the MCP server lists, by listed name. It
	// is held across a whole sync, so that two syncs never interleave their
	// adds and removes.
	toolsMu sync.Mutex
	tools   map[string]orchestrator.ToolInfo
}

// New returns a server over w that lists w's tools and follows their
// changes until Close.
func New(w *workspace.Workspace, opts *Options) *Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	asks, err := newAskStates(o.StateDir)
	if err != nil {
		// The questions then last as long as this server.
		o.Logger.Warn("permission questions will not outlive this server", "dir", o.StateDir, "err", err)
		asks, _ = newAskStates("")
	}
	s := &Server{ws: w, server: o.Server, front: o.Frontend, logger: o.Logger, tools: map[string]orchestrator.ToolInfo{}, asks: asks}
	title, instructions := "FreeCode", "FreeCode: the tools of the user's MCP servers (named mcp__<server>__<tool>) and FreeCode's built-ins. "
	if o.Server != "" {
		title, instructions = "FreeCode: "+o.Server, "FreeCode: the tools of the user's MCP server "+o.Server+", under their own names. "
	}
	s.mcp = mcpsdk.NewServer(&mcpsdk.Implementation{Name: ServerName, Title: title, Version: o.Version}, &mcpsdk.ServerOptions{
		Instructions: instructions +
			"Every call goes through the user's permission rules; a call that needs permission asks the user or is denied with the reason.",
		Logger: o.Logger,
		// Tools are advertised, with list_changed, even while the
		// workspace has none yet; logging lets a client see warnings.
		Capabilities: &mcpsdk.ServerCapabilities{
			Logging: &mcpsdk.LoggingCapabilities{},
			Tools:   &mcpsdk.ToolCapabilities{ListChanged: true},
			// The go-sdk answers prompts/list (with none) whatever the
			// capabilities say; 2026-07-28 requires a server that answers
			// it to declare it.
			Prompts: &mcpsdk.PromptCapabilities{},
		},
		SupportedProtocolVersions: protocolVersions,
		SetCacheable:              setCacheable,
	})
	s.mcp.AddReceivingMiddleware(s.tasksMiddleware, s.listenMiddleware)
	if err := s.addTaskMethods(); err != nil {
		panic(err) // only a standard method's name is refused
	}
	// Subscribed before the first read of the tools, so that no change
	// falls between the two.
	s.sub = w.Subscribe(&workspace.SubscribeOptions{ToolSet: true})
	s.syncTools()
	s.wg.Go(s.follow)
	return s
}

// follow brings the tools list up to date after every change of the
// workspace's tools, until the subscription ends.
func (s *Server) follow() {
	for ev := range s.sub.Events() {
		switch ev.(type) {
		case *workspace.ToolSetEvent, *workspace.ToolsChangedEvent, *workspace.MissedEvent:
			s.syncTools()
		}
	}
}

// Run serves one session over t (such as &StdioTransport{}) until the
// client disconnects or ctx is done.
func (s *Server) Run(ctx context.Context, t mcpsdk.Transport) error {
	return s.mcp.Run(ctx, t)
}

// Connect starts a session over t and returns at once; the session ends
// when the client disconnects, on its Close, or on the server's Close.
func (s *Server) Connect(ctx context.Context, t mcpsdk.Transport) (*mcpsdk.ServerSession, error) {
	return s.mcp.Connect(ctx, t, nil)
}

// Close ends every session and stops following the workspace. It does not
// close the workspace. It is safe to call more than once.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.sub.Close()
		s.wg.Wait()
		for ss := range s.mcp.Sessions() {
			ss.Close()
		}
	})
	return nil
}
