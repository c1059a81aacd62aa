package protocol

import (
	"encoding/json"
	"strings"
	"time"
)

// ServerState is the state of an MCP server.
type ServerState string

// The states of a ServerStatus.
const (
	StateDisabled         ServerState = "disabled"
	StateAwaitingApproval ServerState = "awaitingApproval"
	StateNeedsAuth        ServerState = "needsAuth"
	StateConnecting       ServerState = "connecting"
	StateConnected        ServerState = "connected"
	StateReconnecting     ServerState = "reconnecting"
	StateFailed           ServerState = "failed"
	StateStopped          ServerState = "stopped"
	// StateRemoved is the last status of a server whose entry left the
	// config or the project's settings; freecode/servers never lists it.
	StateRemoved ServerState = "removed"
	// StateIdle is a server started on demand that is not running: its
	// tools are registered from its manifest, and a call starts it.
	StateIdle ServerState = "idle"
	// StateBlocked is a server the organization's managed policy does not
	// let run; ServerStatus.Blocked says why. It is never started.
	StateBlocked ServerState = "blocked"
)

// ServerScope says where a server's entry comes from.
type ServerScope string

// The scopes of a ServerStatus.
const (
	ServerScopeUser    ServerScope = "user"    // the user's config
	ServerScopeProject ServerScope = "project" // the project's .freecode/settings.json
	ServerScopeManaged ServerScope = "managed" // the organization's managed settings
)

// ServerType says how a server is reached.
type ServerType string

// The types of a ServerStatus.
const (
	TypeLocal  ServerType = "local"  // a subprocess
	TypeRemote ServerType = "remote" // a URL
)

// Transport is the MCP transport a server runs on.
type Transport string

// The transports of a ServerStatus.
const (
	TransportStdio Transport = "stdio"
	TransportHTTP  Transport = "http" // Streamable HTTP
	TransportSSE   Transport = "sse"  // the older HTTP+SSE
)

// RemoteTransport is a remote entry's "transport" setting, as written.
type RemoteTransport string

// The transports a remote entry may name.
const (
	RemoteAuto RemoteTransport = "auto" // Streamable HTTP, else HTTP+SSE
	RemoteHTTP RemoteTransport = "http"
	RemoteSSE  RemoteTransport = "sse"
)

// StartMode is an entry's "start" setting, where it sets one.
type StartMode string

// The start modes an approval shows ("eager", the default, is never shown).
const (
	StartOnDemand StartMode = "onDemand"
)

// ServerInfo is the name and version an MCP server reported in initialize.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ServerStatus is one MCP server as the sidecar runs it: the result of
// freecode/servers (one per server) and of start, stop, restart and
// approve, and the params of freecode/servers/status.
type ServerStatus struct {
	Name      string      `json:"name"`
	Scope     ServerScope `json:"scope"`
	Type      ServerType  `json:"type"`
	Transport Transport   `json:"transport,omitempty"`
	State     ServerState `json:"state"`
	ToolCount int         `json:"toolCount"`
	PID       int         `json:"pid,omitempty"`
	// ServerInfo and ProtocolVersion are what the server said in
	// initialize.
	ServerInfo      *ServerInfo `json:"serverInfo,omitempty"`
	ProtocolVersion string      `json:"protocolVersion,omitempty"`
	// ConnectedAt is when the live session came up (RFC 3339).
	ConnectedAt time.Time `json:"connectedAt,omitzero"`
	// LastPingMs is the last health ping's round trip.
	LastPingMs float64 `json:"lastPingMs,omitempty"`
	// LastError says what went wrong last, in the user's terms first
	// (docs/protocol.md, "Failures"); LastErrorKind what kind of failure.
	LastError     string      `json:"lastError,omitempty"`
	LastErrorKind FailureKind `json:"lastErrorKind,omitempty"`
	// ExitCode is the exit code of the process whose exit LastError tells.
	ExitCode *int `json:"exitCode,omitempty"`
	// Retry is set while a failed connect waits for its next try.
	Retry      *RetryStatus `json:"retry,omitempty"`
	StderrTail []string     `json:"stderrTail,omitempty"`
	// Command is a local server's argv as configured, ${env:NAME}
	// unexpanded: what approving a project server would run.
	Command []string `json:"command,omitempty"`
	// URL is a remote server's URL, secrets shown as ***.
	URL string `json:"url,omitempty"`
	// ToolListCut, when set, says that the server's tool list was cut
	// short, and why.
	ToolListCut string `json:"toolListCut,omitempty"`
	// Approval is set while a project server awaits approval: everything
	// approving it covers, and the hash to approve it by.
	Approval *ServerApproval `json:"approval,omitempty"`
	// Sandbox says in a line the sandbox a local server was last started
	// in (what it may write, what it can never write, what it cannot read,
	// what it may reach), made from the same policy as its sandbox; absent
	// for a server not sandboxed or not started yet.
	Sandbox string `json:"sandbox,omitempty"`
	// Blocked, with state blocked, says why the organization's policy
	// blocks the server and in which file and entry, then the policy's
	// message if it has one: "blocked by your organization's policy:
	// deniedMcpServers[2] in /etc/freecode/managed-settings.json".
	Blocked string `json:"blocked,omitempty"`
	// MissingSecrets, with lastErrorKind secret, are the secrets the
	// entry names that are not set, by name: what a frontend asks the
	// user for (a password input) and sends with freecode/secrets/set.
	MissingSecrets []string `json:"missingSecrets,omitempty"`
	// Registry is the MCP Registry server the entry was installed from
	// (its "registry" block); absent for an entry written by hand.
	Registry *RegistryIdentity `json:"registry,omitempty"`
}

// RegistryIdentity is an entry's "registry" block: the MCP Registry server
// it was installed from, part of what approving the entry approves.
type RegistryIdentity struct {
	// Name is the server's name in the registry ("io.github.owner/server").
	Name string `json:"name"`
	// Version is the concrete version installed.
	Version string `json:"version"`
	// URL is the registry's base URL.
	URL string `json:"url"`
	// Digest is the package's digest, when the registry gave one
	// ("sha256:…").
	Digest string `json:"digest,omitempty"`
}

// ServerApproval is what approving a project server lets the project do,
// as its .freecode/settings.json has it: ${env:NAME} unexpanded (the user
// sees which of their variables would be sent), relative paths resolved
// against the project, nothing redacted (it is the repository's text, not
// the user's). A frontend shows all of it before the user approves, and
// escapes it first where a terminal would act on it.
type ServerApproval struct {
	// EntryHash names the entry: freecode/servers/approve takes it back
	// and refuses it once the entry says something else.
	EntryHash string   `json:"entryHash"`
	Command   []string `json:"command,omitempty"`
	Cwd       string   `json:"cwd,omitempty"`
	// Env is the variables the server is given, values as written.
	Env map[string]string `json:"env,omitempty"`
	// InheritEnv gives the server the sidecar's whole environment, API
	// keys included.
	InheritEnv bool   `json:"inheritEnv,omitempty"`
	URL        string `json:"url,omitempty"`
	// Transport is a remote entry's.
	Transport  RemoteTransport   `json:"transport,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	CABundle   string            `json:"caBundle,omitempty"`
	ClientCert string            `json:"clientCert,omitempty"`
	ClientKey  string            `json:"clientKey,omitempty"`
	OAuth      *ApprovalOAuth    `json:"oauth,omitempty"`
	// How it would run and how what it lists is checked, each where the
	// entry sets it (absent: the default). There is no "pinning": a
	// project cannot turn pinning off.
	Start           StartMode `json:"start,omitempty"`
	DeferTools      *bool     `json:"deferTools,omitempty"`
	TimeoutMs       int64     `json:"timeout,omitempty"`
	ToolTimeoutMs   int64     `json:"toolTimeout,omitempty"`
	IdleTimeoutMs   int64     `json:"idleTimeout,omitempty"`
	MaxMessageBytes int       `json:"maxMessageBytes,omitempty"`
	ProtocolVersion string    `json:"protocolVersion,omitempty"`
	// Sandbox says in a line the sandbox a local server would run in:
	// what it may write, what it cannot read, what it may reach; or that
	// it would run unsandboxed ("sandbox": false).
	Sandbox string `json:"sandbox,omitempty"`
	// Registry is the MCP Registry server the entry says it was installed
	// from, which the entry hash covers.
	Registry *RegistryIdentity `json:"registry,omitempty"`
	// PendingReviews are the definitions the server listed when it last
	// ran that differ from those the user accepted, or are new: they still
	// await review once the entry is approved, and are shown beside it.
	PendingReviews []DefinitionChange `json:"pendingReviews,omitempty"`
}

// ApprovalOAuth is a project server's "oauth" key, as written.
type ApprovalOAuth struct {
	ClientID          string   `json:"clientId,omitempty"`
	ClientSecret      string   `json:"clientSecret,omitempty"`
	ClientMetadataURL string   `json:"clientMetadataUrl,omitempty"`
	Scopes            []string `json:"scopes,omitempty"`
	CallbackPort      int      `json:"callbackPort,omitempty"`
}

// ToolInfo is one tool of the registry (freecode/tools).
type ToolInfo struct {
	// ID is mcp__<server>__<tool>, or a built-in's name.
	ID          string `json:"id"`
	Server      string `json:"server,omitempty"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description"`
	ReadOnly    bool   `json:"readOnly"`
	Destructive *bool  `json:"destructive,omitempty"`
	OpenWorld   *bool  `json:"openWorld,omitempty"`
	// Idempotent says the tool declares a second call with the same
	// arguments does nothing more (idempotentHint): a call of it whose
	// answer was lost is sent once more, as a read-only tool's is.
	Idempotent  bool            `json:"idempotent,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// Alias is the name providers see when ID is over 64 characters.
	Alias string `json:"alias,omitempty"`
	// DefinitionChanged says that the tool's server lists another
	// definition than the one the user accepted: what is listed here, and
	// shown to models, is the accepted one, and each call asks with the
	// change shown, until the user accepts it (freecode/tools/review).
	DefinitionChanged bool `json:"definitionChanged,omitempty"`
	// New says that the tool appeared on a server whose tools were
	// pinned already, and the user has not accepted it yet.
	New bool `json:"new,omitempty"`
	// UI is what the tool declares of the MCP Apps extension: its view
	// and who it is for. Absent when it declares nothing (for both
	// audiences, no view).
	UI *ToolUI `json:"ui,omitempty"`
	// AllowedBy is the allow rule that lets the tool's calls run without
	// asking, as the rules in force decide now; absent when none does (a
	// read-only tool that no rule names runs unasked too, by default). A
	// frontend that shows it hears of a change of the rules by
	// freecode/tools/changed.
	AllowedBy *AllowedBy `json:"allowedBy,omitempty"`
}

// AllowedBy names an allow rule: its pattern, where it comes from and the
// file that holds it (absent for a session rule).
type AllowedBy struct {
	Rule   string     `json:"rule"`
	Source RuleSource `json:"source"`
	Path   string     `json:"path,omitempty"`
}

// ToolUI is a tool's part of the MCP Apps extension (SEP-1865).
type ToolUI struct {
	// ResourceURI is the ui:// resource that renders the tool's results,
	// read with freecode/resources/read.
	ResourceURI string `json:"resourceUri,omitempty"`
	// Visibility is who the tool is for: "model", "app", both or neither.
	// A tool without "model" is offered to no model; without "app" no app
	// may call it.
	Visibility []Audience `json:"visibility"`
}

// Audience is who an MCP Apps tool is for.
type Audience string

// The audiences of a ToolUI.
const (
	AudienceModel Audience = "model"
	AudienceApp   Audience = "app"
)

// ToolCall is one call of a batch. Tool is an id or an alias.
type ToolCall struct {
	CallID    string          `json:"callId"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// App is set when the call comes from an MCP Apps view the frontend
	// renders, not from a model: the view's server. Absent is a model's call.
	App *CallApp `json:"app,omitempty"`
}

// CallApp names the app a call comes from.
type CallApp struct {
	// Server is the server whose ui:// resource the view is.
	Server string `json:"server"`
}

// Decision says how a call got past, or did not get past, validation and
// the permission rules.
type Decision string

// The decisions of a ToolResult.
const (
	DecisionAllowed Decision = "allowed" // a rule or the default allowed it
	DecisionAsked   Decision = "asked"   // the user was asked and allowed it
	DecisionDenied  Decision = "denied"  // a rule, the user, or nobody to ask
	DecisionInvalid Decision = "invalid" // unknown tool or invalid arguments: never sent
)

// ToolResult is the outcome of one ToolCall. A call that failed in any way
// (denied, invalid, timed out, server gone) is a result with IsError and a
// text that says what happened.
type ToolResult struct {
	CallID string `json:"callId"`
	// Content is the MCP content blocks, as the server sent them.
	Content           []ContentBlock  `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError"`
	Decision          Decision        `json:"decision"`
	DurationMs        int64           `json:"durationMs"`
	Truncated         *Truncated      `json:"truncated,omitempty"`
	// OutcomeUnknown says that the call was sent and its answer lost (the
	// connection or the response stream broke): the server may or may not
	// have run it, and it was not retried, since the tool is neither
	// read-only nor idempotent. The text says "outcome unknown, not retried".
	OutcomeUnknown bool `json:"outcomeUnknown,omitempty"`
	// Task is set when the call's server runs it as a task (MCP tasks):
	// the text says "running as task <taskId>", and the outcome comes in
	// freecode/tasks/changed.
	Task *TaskInfo `json:"task,omitempty"`
}

// ContentBlock is one MCP content block (text, image, audio, resource
// link, embedded resource) as its server sent it: the protocol fixes its
// type, and a text block's text; the rest passes as it is.
//
//protocol:json object type:string text?:string
type ContentBlock = json.RawMessage

// Truncated says how much of a result was shown and where the whole of it
// was saved.
type Truncated struct {
	ShownChars int    `json:"shownChars"`
	TotalChars int    `json:"totalChars"`
	SavedTo    string `json:"savedTo,omitempty"`
}

// Text returns the text content blocks of r, one per line.
func (r *ToolResult) Text() string {
	var parts []string
	for _, c := range r.Content {
		var block struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(c, &block) == nil && block.Type == "text" {
			parts = append(parts, block.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Project is the project and the files a sidecar uses (freecode/project).
type Project struct {
	Root           string        `json:"root,omitempty"`
	ProjectTrusted bool          `json:"projectTrusted"`
	ConfigPath     string        `json:"configPath"`
	SettingsPaths  SettingsPaths `json:"settingsPaths"`
	// Problems are the watched files that have problems now, as
	// freecode/config/problems last told them: what a frontend that asks
	// once (the CLI) shows without waiting for notifications.
	Problems []ConfigProblems `json:"problems,omitempty"`
	// PendingRules is set while the trusted project's rule files loosen
	// the rules the user accepted: held back until accepted.
	PendingRules *RulesReview `json:"pendingRules,omitempty"`
}

// SettingsPaths are the rule files: the user's, and the project's two.
type SettingsPaths struct {
	User    string `json:"user"`
	Project string `json:"project,omitempty"`
	Local   string `json:"local,omitempty"`
}

// PermissionRequest asks the frontend whose batch holds the call whether
// it may run (freecode/permission/request).
type PermissionRequest struct {
	CallID string `json:"callId"`
	// Tool is the tool's id, never its alias.
	Tool      string          `json:"tool"`
	Server    string          `json:"server,omitempty"`
	Arguments json.RawMessage `json:"arguments"`
	ReadOnly  bool            `json:"readOnly"`
	// Reason says why the sidecar asks: no rule and the tool is not
	// read-only, or which ask rule in which file.
	Reason string `json:"reason"`
	// ProjectTrusted says whether an allow rule in the project's local
	// file would be honoured: a frontend offers ScopeLocal only then.
	ProjectTrusted bool `json:"projectTrusted"`
	// NoAlwaysAllow, when set, says why an allowAlways answer could take
	// no effect (the organization allows only its own allow rules, or its
	// ask rule covers the tool): a frontend offers only allowOnce and
	// deny. An allowAlways answer then counts as allowOnce.
	NoAlwaysAllow string `json:"noAlwaysAllow,omitempty"`
	// Review is set when the tool's definition changed since the user
	// accepted it, or the tool is new: the change to show with the
	// question, which the answer may accept (AcceptDefinition).
	Review *PermissionReview `json:"review,omitempty"`
	// App is set when an MCP Apps view made the call (ToolCall.App), so
	// the user is told a view asks, not a model.
	App *CallApp `json:"app,omitempty"`
}

// PermissionReview is the change a PermissionRequest shows.
type PermissionReview struct {
	Kind ReviewKind `json:"kind"`
	// Hash names the definition shown: accepting it accepts that one
	// only, not one the server has listed since.
	Hash   string           `json:"hash"`
	Diff   string           `json:"diff"`
	Change DefinitionChange `json:"change"`
}

// PermissionDecision is a user's answer to a PermissionRequest.
type PermissionDecision string

// The answers to a PermissionRequest.
const (
	AllowOnce   PermissionDecision = "allowOnce"
	AllowAlways PermissionDecision = "allowAlways"
	Deny        PermissionDecision = "deny"
)

// PermissionScope is the rule file an AllowAlways answer is written to.
type PermissionScope string

// The scopes of an AllowAlways answer.
const (
	ScopeLocal PermissionScope = "local" // the project's settings.local.json
	ScopeUser  PermissionScope = "user"  // the user's settings.json
)

// PermissionResponse is the result of freecode/permission/request.
type PermissionResponse struct {
	Decision PermissionDecision `json:"decision"`
	Scope    PermissionScope    `json:"scope,omitempty"`
	// AcceptDefinition, with an allow decision on a request that has a
	// Review, accepts the definition shown, as freecode/tools/review's
	// accept would.
	AcceptDefinition bool `json:"acceptDefinition,omitempty"`
}

// Hashes are the provider definitions' hashes, by format.
type Hashes struct {
	Anthropic string `json:"anthropic"`
	OpenAI    string `json:"openai"`
}

// ToolsChanged is the params of freecode/tools/changed: the provider
// definitions changed. It comes only when a hash changed.
type ToolsChanged struct {
	Hashes Hashes `json:"hashes"`
	// Server and Reason are hints for a log line: read the definitions
	// again whatever they say.
	Server string `json:"server,omitempty"`
	Reason string `json:"reason"`
}

// ToolProgress is the params of freecode/tools/progress: an MCP server's
// progress on a call, sent to the frontend that made it.
type ToolProgress struct {
	CallID   string  `json:"callId"`
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// LogLevel is the level of a ServerLog line.
type LogLevel string

// The levels of a ServerLog line.
const (
	LevelDebug   LogLevel = "debug"
	LevelInfo    LogLevel = "info"
	LevelWarning LogLevel = "warning"
	LevelError   LogLevel = "error"
)

// LogSource says where a ServerLog line came from.
type LogSource string

// The sources of a ServerLog line.
const (
	SourceStderr LogSource = "stderr" // a line the server wrote to stderr
	SourceMCP    LogSource = "mcp"    // an MCP notifications/message
	// SourceFreeCode is a line of the server's life as FreeCode saw it:
	// starting, connected, exited, retrying, gave up, stopped.
	SourceFreeCode LogSource = "freecode"
)

// FailureKind says what kind of failure a ServerStatus's lastError is.
type FailureKind string

// The kinds of failure (docs/protocol.md, "Failures").
const (
	FailureCommandNotFound FailureKind = "commandNotFound"
	FailureExited          FailureKind = "exited"
	FailurePackageNotFound FailureKind = "packageNotFound"
	FailureTimeout         FailureKind = "timeout"
	FailureConfig          FailureKind = "config"
	// FailureSecret: a secret the entry names (${secret:NAME}) is not
	// set; ServerStatus.missingSecrets says which, and
	// freecode/secrets/set is what helps.
	FailureSecret FailureKind = "secret"
	FailureOther  FailureKind = "other"
)

// RetryStatus is the next try of a server whose connect failed: "retrying
// 2/6 in 4 s" is Attempt/Max and At less now.
type RetryStatus struct {
	Attempt int       `json:"attempt"` // the retry that comes next: 1 for the first (the try after the one that failed)
	Max     int       `json:"max"`     // retries in all: 6
	At      time.Time `json:"nextAt"`
}

// ServerLog is the params of freecode/servers/log: one line of an MCP
// server's log, its secrets masked. The text is as the server wrote it: a
// frontend that shows it on a terminal escapes it first.
type ServerLog struct {
	Name    string    `json:"name"`
	Level   LogLevel  `json:"level"`
	Source  LogSource `json:"source"`
	Message string    `json:"message"`
	Time    time.Time `json:"time"`
}

// ConfigProblems is the params of freecode/config/problems: the problems
// of one watched file, an empty list once it is fixed. While a file does
// not load, what it last held stays in force.
type ConfigProblems struct {
	Path     string    `json:"path"`
	Problems []Problem `json:"problems"`
	// LastGood is set while the file does not load: what it last held is
	// what runs.
	LastGood bool `json:"lastGood,omitempty"`
	// Summary is the problems in one line to show as it is ("the config
	// has 2 problems; showing the last good one"); "" without problems.
	Summary string `json:"summary,omitempty"`
}

// Problem is one problem of a file. Line and Column are 1-based; Key names
// the setting, as in "mcp.servers[2].url".
type Problem struct {
	Message  string   `json:"message"`
	Line     int      `json:"line,omitempty"`
	Column   int      `json:"column,omitempty"`
	Key      string   `json:"key,omitempty"`
	Severity Severity `json:"severity"`
}

// Severity says what a Problem does to its file.
type Severity string

// The severities of a Problem.
const (
	SeverityError   Severity = "error"   // the file does not load; the last good one runs
	SeverityWarning Severity = "warning" // it loads; this part of it is ignored
)
