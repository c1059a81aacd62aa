package mcp

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/manifest"
	"github.com/freecode/freecode/mcp/sandbox"
)

// State is the lifecycle state of a Conn.
type State int

// The states of a Conn: how one moves between them is in the package doc.
const (
	StateDisabled State = iota
	StateAwaitingApproval
	StateConnecting
	StateConnected
	StateReconnecting
	StateFailed
	StateStopped
	// StateNeedsAuth: the server needs an OAuth sign-in (see oauth.ErrNeedsAuth).
	StateNeedsAuth
	// StateIdle is a server started on demand that is not running: its
	// tools are registered from its manifest, and a call starts it.
	StateIdle
	// StateBlocked is a server the organization's managed policy does not
	// let run (Status.Blocked says why); it is never started.
	StateBlocked
)

var stateNames = [...]string{
	StateDisabled:         "disabled",
	StateAwaitingApproval: "awaitingApproval",
	StateConnecting:       "connecting",
	StateConnected:        "connected",
	StateReconnecting:     "reconnecting",
	StateFailed:           "failed",
	StateStopped:          "stopped",
	StateNeedsAuth:        "needsAuth",
	StateIdle:             "idle",
	StateBlocked:          "blocked",
}

// String returns the state's name as the sidecar protocol spells it.
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// ParseState returns the state named name (as String spells it).
func ParseState(name string) (State, error) {
	for i, n := range stateNames {
		if n == name {
			return State(i), nil
		}
	}
	return 0, fmt.Errorf("unknown server state %q", name)
}

// ServerInfo is the name and version a server reported in initialize.
type ServerInfo struct {
	Name    string
	Version string
}

// Status is a snapshot of one configured server, which frontends are
// sent as the protocol's ServerStatus (server/wire converts it). It holds
// none of the user's secrets: the URL is redacted, the server's stderr and
// errors are masked (see Conn), and env and header values are left out,
// but for the repository's own text in the Approval of a project server
// awaiting approval, where a ${env:NAME} is shown as written, never
// expanded.
type Status struct {
	Name            string
	Scope           string // "user" or "project"
	Type            string // "local" or "remote"
	Transport       string // "stdio", "http" or "sse"; "" when not known yet
	State           State
	ToolCount       int
	PID             int // a local server's process (group) id while it runs
	ServerInfo      *ServerInfo
	ProtocolVersion string
	ConnectedAt     time.Time     // when the live session came up; zero if none
	LastPing        time.Duration // the last health ping's round trip; 0 if none yet
	// LastError says what went wrong last, in the user's terms first
	// (see Failure); LastErrorKind what kind of failure it was.
	LastError     string
	LastErrorKind FailureKind
	// ExitCode is the exit code of the process whose exit LastError
	// tells, when HasExitCode.
	ExitCode    int
	HasExitCode bool
	// Retry is set while a failed connect waits for its next try.
	Retry      *Retry
	StderrTail []string

	// Command is a local server's argv as configured: ${env:NAME}
	// unexpanded, nothing escaped (whoever prints it escapes it). It is
	// what a user approves a project server by.
	Command []string
	// URL is a remote server's URL, its userinfo and query values redacted.
	URL string
	// ToolListCut, when not empty, says that the server's tool list was cut
	// short and why (too many pages, too many bytes, a repeated cursor).
	ToolListCut string
	// Approval is set for a project server awaiting approval: the whole
	// entry the user would approve, and its hash to approve it by.
	Approval *Approval
	// Sandbox is the sandbox a local server was last started in, in a
	// line (sandbox.Policy.Describe of the policy its command line was
	// made from); "" for a server not sandboxed or not started yet.
	Sandbox string
	// Blocked, with StateBlocked, says why the organization's policy
	// blocks the server and where (config.Blocked's String).
	Blocked string
	// MissingSecrets, with LastErrorKind FailureSecret, are the secrets
	// its entry names that are not set, by name: what a frontend asks
	// the user for.
	MissingSecrets []string
	// Registry is the MCP Registry server the entry says it was installed
	// from (its "registry" block); nil for an entry written by hand.
	Registry *config.Registry
}

// Approval is what approving a project server lets the project do: every
// field config.EntryHash covers, as the project's file has it (${env:NAME}
// unexpanded, so the user sees which of their variables would be sent, and
// relative paths resolved against the project). Values are the
// repository's text, shown unredacted and unescaped: whoever prints them to
// a terminal escapes them.
type Approval struct {
	// EntryHash is config.EntryHash of the entry: approving it approves
	// this entry and no other (the sidecar's freecode/servers/approve
	// refuses a hash the entry no longer has).
	EntryHash  string
	Command    []string
	Cwd        string
	Env        map[string]string
	InheritEnv bool // it gets the whole environment, API keys included
	URL        string
	Transport  string // a remote entry's: "http", "sse", or "auto" (both tried)
	Headers    map[string]string
	CABundle   string
	ClientCert string
	ClientKey  string
	OAuth      *ApprovalOAuth
	// Registry is the MCP Registry identity the entry claims (name,
	// version, registry, digest); nil for an entry written by hand.
	Registry *config.Registry
	// RunSettings are how it would run and how what it lists is checked,
	// where the entry sets them.
	config.RunSettings
	// Sandbox says in a line the sandbox a local server would run in, or
	// that it would run unsandboxed (sandbox.DescribeServer); "" for a
	// remote one.
	Sandbox string
	// Pending is what the server's manifest holds that awaits review:
	// definitions it listed that differ from those the user accepted, or
	// are new. The entry cannot tell them; the workspace fills them in, so
	// that a re-approval shows the definition changes beside the entry's.
	Pending []*manifest.Change
}

// ApprovalOAuth is the "oauth" key of a project server's entry, as written.
type ApprovalOAuth struct {
	ClientID          string
	ClientSecret      string
	ClientMetadataURL string
	Scopes            []string
	CallbackPort      int
}

// ApprovalOf returns what approving the project server srv covers: what
// StatusOf puts in the status of one awaiting approval.
func ApprovalOf(srv config.Server) *Approval {
	a := &Approval{
		EntryHash: config.EntryHash(srv), Command: slices.Clone(srv.Command), Cwd: srv.Cwd, Env: approvalEnv(srv.Env),
		InheritEnv: srv.InheritEnv, URL: srv.URL, Transport: srv.Transport, Headers: maps.Clone(srv.Headers),
		CABundle: srv.CABundle, ClientCert: srv.ClientCert, ClientKey: srv.ClientKey,
		RunSettings: srv.RunSettings(),
	}
	if srv.Registry != nil {
		r := *srv.Registry
		a.Registry = &r
	}
	if srv.Type == config.TypeLocal {
		a.Sandbox = sandbox.DescribeServer(srv, sandbox.HostOf(nil))
	}
	if o := srv.OAuth; o != nil && !o.Equal(&config.OAuth{}) {
		a.OAuth = &ApprovalOAuth{
			ClientID: o.ClientID, ClientSecret: o.ClientSecret, ClientMetadataURL: o.ClientMetadataURL,
			Scopes: slices.Clone(o.Scopes), CallbackPort: o.CallbackPort,
		}
	}
	return a
}

// approvalEnv is an entry's env as the approval shows it: as written, a
// ${env:NAME} reference included (the project asks for that variable of
// the user's), but a password written into a URL (a proxy's, an index's:
// http://user:pass@proxy:3128) shown as "***". The approval's hash is the
// entry's, so what is approved is the value as written all the same.
func approvalEnv(env map[string]string) map[string]string {
	out := maps.Clone(env)
	for k, v := range out {
		out[k] = maskURLPassword(v)
	}
	return out
}

// maskURLPassword returns v with the password of the URL it holds, if a
// literal one, as "***"; the user name stays.
func maskURLPassword(v string) string {
	i := strings.Index(v, "://")
	if i < 0 {
		return v
	}
	rest := v[i+len("://"):]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 {
		return v
	}
	user, pass, ok := strings.Cut(rest[:at], ":")
	if !ok || pass == "" || strings.Contains(rest[:at], "${") {
		return v
	}
	return v[:i+len("://")] + user + ":***" + rest[at:]
}

// StatusOf returns the status of srv in state st as far as the entry alone
// tells: for servers that have no Conn, such as a project server awaiting
// approval (with its Approval) or a disabled one.
func StatusOf(srv config.Server, st State) Status {
	s := Status{Name: srv.Name, Scope: srv.Scope, Type: srv.Type, State: st}
	if s.Type == "" {
		s.Type = config.TypeLocal
	}
	switch s.Type {
	case config.TypeLocal:
		s.Transport = "stdio"
		s.Command = slices.Clone(srv.Command)
	case config.TypeRemote:
		if srv.Transport == config.TransportHTTP || srv.Transport == config.TransportSSE {
			s.Transport = srv.Transport
		}
		s.URL = srv.Redacted().URL
	}
	if st == StateAwaitingApproval && srv.Scope == config.ScopeProject {
		s.Approval = ApprovalOf(srv)
	}
	if srv.Registry != nil {
		r := *srv.Registry
		s.Registry = &r
	}
	return s
}

// Errors a call or a start may wrap. Callers test them with errors.Is.
var (
	// ErrConnectionLost means the transport failed (the process exited, the
	// connection reset) while a request was in flight: the request may or may
	// not have reached the server.
	ErrConnectionLost = errors.New("connection to MCP server lost")
	// ErrNotConnected means the server is not connected (stopped, failed,
	// disabled) and the request was never sent.
	ErrNotConnected = errors.New("MCP server not connected")
	// ErrRetrying means a connect attempt failed and the Conn goes on
	// trying in the background (see Conn.Start).
	ErrRetrying = errors.New("retrying in the background")
	// ErrNoServer means no server of that name is configured.
	ErrNoServer = errors.New("no such MCP server")
)
