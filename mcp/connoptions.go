package mcp

import (
	"context"
	"log/slog"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/mcp/oauth"
)

// ConnOptions configure a Conn. A nil *ConnOptions means defaults.
type ConnOptions struct {
	// Logger receives the Conn's logs, scoped with the server's name.
	Logger *slog.Logger
	// OnStatus is called, from a Conn goroutine, on every state change.
	OnStatus func(Status)
	// PingInterval is the health-ping period (default config.DefaultPollInterval).
	PingInterval time.Duration
	// Environ returns the sidecar's environment (default os.Environ). It
	// feeds ${env:NAME} expansion and a local server's allowed variables.
	Environ func() []string
	// ClientInfo is what initialize reports as the client.
	ClientInfo *mcpsdk.Implementation

	// ClientOptions, if set, adjusts the go-sdk client's options before
	// NewConn makes the client: the place to declare client capabilities
	// (roots, sampling, elicitation) and set their handlers. The Conn's
	// own handlers (tools/list_changed, progress) are set already; a hook
	// that replaces one must call it.
	ClientOptions func(srv config.Server, opts *mcpsdk.ClientOptions)
	// OnClient, if set, is called once by NewConn with the Conn's go-sdk
	// client, before any session: what outlives a session lives there
	// (roots: Client.AddRoots and RemoveRoots notify every session).
	OnClient func(srv config.Server, c *mcpsdk.Client)

	// OnLog, if set, is given the server's log lines (see Log), from the
	// Conn's goroutines: it must not block.
	OnLog func(Log)

	// Elicitation and Sampling declare those client capabilities and
	// route the servers' questions to the Asker of the request they come
	// during (see Asker): without one an elicitation is declined and
	// sampling refused.
	Elicitation bool
	Sampling    bool
	// LogLevel is the MCP log level servers that declare logging are
	// asked for (see SetLogLevel); "" leaves them at their own.
	LogLevel string

	// Versions remembers which entries do not take the newest protocol
	// (see VersionMemo); nil remembers nothing beyond this Conn.
	Versions *VersionMemo

	// NoRetry makes the first connect's failure final instead of retried
	// with backoff, and a session that is lost gets one reconnect, not
	// six: enough for a read-only call whose server died under it to be
	// retried, as the orchestrator does; a failed reconnect or a second
	// loss leaves the Conn failed. For one-shot commands such as `freecode
	// mcp start` and `freecode tools call`, which report a failure at once
	// and stop.
	NoRetry bool

	// Policy says whether the organization's managed policy blocks the
	// server, last thing before each connect (nil: it does not). Nil
	// means the system's managed settings as they are at that moment
	// (config.LoadManaged), a file that does not load blocking every
	// server: whatever starts a Conn, the policy holds. The workspace
	// passes the policy it keeps, whose last good version stays in force
	// while a broken file is fixed.
	Policy func(srv config.Server, lookup func(string) (string, bool)) *config.Blocked

	// Secrets resolves the ${secret:NAME} of an entry, by NAME, at each
	// connect: the user's secret store (internal/secretstore). Nil means
	// the default store, ~/.freecode/auth's, opened then.
	Secrets func(name string) (string, bool)

	// OnNotice, if set, is told what FreeCode does about a server's start
	// that a person waiting for it should know: a package runner still
	// installing at the server's timeout, a half-written npx cache
	// removed. The Conn logs the same. It must not block.
	OnNotice func(msg string)

	// Dial, if set, is how the Conn reaches its server, in place of
	// starting its command or dialing its URL: it is called at every
	// connect with the server's entry (${env:NAME} expanded) and returns
	// the transport of one new session, over which the Conn runs
	// initialize, tools/list and everything after, the same as over stdio
	// or HTTP. The Conn then starts no process and applies no URL policy:
	// those are the Dial's business. Status reports no transport and no
	// pid. Tests use it to run the real Conn against in-memory go-sdk
	// servers (internal/mcptest); so can code that serves MCP servers
	// in-process.
	Dial func(ctx context.Context, srv config.Server) (mcpsdk.Transport, error)

	// Auth configures the OAuth sign-in of a remote server (nil means
	// defaults: tokens in oauth.DefaultStore, no page opened unasked).
	Auth *oauth.Options

	// Telemetry records a span per connect and each session's duration
	// (nil: none). A call's own spans take CallOptions.Telemetry.
	Telemetry *Telemetry
}
