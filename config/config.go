// Package config loads, validates and edits FreeCode's config file
// (~/.freecode/config.json) and the project settings files.
//
// The config file is shared with the rest of FreeCode (provider keys, the
// active model), so this package only ever edits the "mcp" key and keeps
// everything else, comments included, byte for byte.
package config

import "time"

// Server types.
const (
	TypeLocal  = "local"
	TypeRemote = "remote"
)

// Remote transports.
const (
	TransportAuto = "auto"
	TransportHTTP = "http"
	TransportSSE  = "sse"
)

// Defaults for fields a server entry or the mcp section may omit.
const (
	DefaultTimeout         = 5 * time.Second
	DefaultToolTimeout     = 600 * time.Second
	DefaultPollInterval    = 5 * time.Second
	DefaultMaxResultChars  = 50000
	DefaultMaxMessageBytes = 16 << 20
	// DefaultProtocolVersion is the version a server that pins none is
	// spoken to when it does not take the newest (see mcp's negotiation).
	DefaultProtocolVersion = "2025-11-25"
	DefaultMaxParallel     = 8
	// DefaultLogLevel is mcp.logLevel's default: the MCP log level servers
	// are asked to log at.
	DefaultLogLevel = "info"
)

// MaxParallelLimit is the largest mcp.maxParallel the config accepts.
const MaxParallelLimit = 64

// Config is the part of config.json that FreeCode's MCP code owns.
type Config struct {
	MCP MCP
	// Approvals records the project-scope server entries the user approved,
	// keyed by project path + entry hash (see ApprovalKey). In the file:
	// "mcp.approvedProjectServers".
	Approvals []string
	// Trusted lists the real paths of projects whose settings the user
	// trusts. In the file: "mcp.trustedProjects".
	Trusted []string
	// Warnings are what the file holds that FreeCode ignores (keys it
	// does not know), with their line and column: the rest loaded.
	Warnings []Problem
}

// MCP is the "mcp" section of the config file.
type MCP struct {
	Servers        []Server
	PollInterval   time.Duration // "pollInterval", ms in the file
	MaxResultChars int           // "maxResultChars"
	// MaxParallel bounds how many read-only tool calls of one batch run at
	// once ("maxParallel", 1 to MaxParallelLimit).
	MaxParallel int
	// DeferTools is "deferTools": false, true or "auto" (see DeferMode).
	DeferTools DeferMode
	// AutoDeferTools and AutoDeferTokens are the auto mode's thresholds
	// ("autoDeferTools", "autoDeferTokens"): more tools than the one, or
	// definitions of more estimated tokens than the other, defer.
	AutoDeferTools  int
	AutoDeferTokens int
	// IdleTimeout is "idleTimeout" (ms, default DefaultIdleTimeout): how
	// long a server started on demand runs without a call before it is
	// stopped, unless its own entry says otherwise.
	IdleTimeout time.Duration
	// LogLevel is the MCP log level ("logLevel", one of LogLevels) servers
	// that log are asked for: their notifications/message below it are not
	// sent.
	LogLevel string
	// Sandbox is "mcp.sandbox": the sandbox every local server of the
	// user's file runs in unless its entry says "sandbox": false; nil if
	// the key is absent (see Sandbox).
	Sandbox *Sandbox
	// RegistryURL is "mcp.registry.url": the MCP Registry `freecode mcp
	// search` and `install` ask; "" means DefaultRegistryURL.
	RegistryURL string
	// Telemetry is "mcp.telemetry", the user's OpenTelemetry export
	// (telemetry.go); nil if the key is absent. Never a project's: a
	// project file's is a warning and nil.
	Telemetry *Telemetry
}

// LogLevels are the MCP log levels (RFC 5424's severities), least severe
// first.
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// Server is one entry of mcp.servers, with defaults applied.
// Durations are milliseconds in the file.
type Server struct {
	Name    string
	Type    string // TypeLocal or TypeRemote
	Enabled bool   // default true

	// Local servers.
	Command    []string          // argv; a string in the file is split like a shell would
	Env        map[string]string // values may hold ${env:NAME}
	Cwd        string
	InheritEnv bool // "inheritEnv": pass the sidecar's whole environment
	// Sandbox is the entry's "sandbox" key, mcp.sandbox merged in for the
	// user's entries; nil if neither is set. See Sandboxed.
	Sandbox *Sandbox

	// Remote servers.
	URL        string            // may hold ${env:NAME}
	Transport  string            // TransportAuto (default), TransportHTTP or TransportSSE
	Headers    map[string]string // values may hold ${env:NAME}; never printed
	CABundle   string            // "caBundle": PEM file of extra roots
	ClientCert string            // "clientCert": PEM file, for mTLS
	ClientKey  string            // "clientKey": PEM file, for mTLS
	OAuth      *OAuth            // "oauth": how to sign in (see OAuth); nil if the key is absent

	Timeout         time.Duration // connect + initialize + first tools/list
	ToolTimeout     time.Duration // one tools/call, restarted by progress up to 4x
	ProtocolVersion string        // "protocolVersion": a pinned MCP version; "" negotiates
	MaxMessageBytes int           // "maxMessageBytes": one message's cap: a local server's stdout line, a remote one's JSON answer or SSE event
	// DeferTools is the entry's "deferTools": whether its tools are left
	// out of the definitions sent to providers; nil follows
	// mcp.deferTools. It changes nothing about the connection.
	DeferTools *bool
	// Start is the entry's "start": StartEager (the default: started with
	// FreeCode) or StartOnDemand (registered from its manifest and started
	// at its first call; see ondemand.go).
	Start string
	// IdleTimeout is the entry's "idleTimeout" (ms): how long it runs
	// without a call once started on demand; 0 follows mcp.idleTimeout.
	IdleTimeout time.Duration
	// PinningOff is the entry's "pinning": "off": its tool definitions are
	// not pinned, for servers whose descriptions change by design.
	PinningOff bool
	// Registry is the entry's "registry" block: the MCP Registry server
	// and version it was installed from; nil for an entry written by hand.
	Registry *Registry

	// Scope is "user" for servers from config.json, "project" for servers
	// from a project's .freecode/settings.json. Not read from the file.
	Scope string
}
