package config

// Managed settings: the policy an organization installs on a machine, in
// the system's place for it (ManagedDir), above every other scope. No
// flag, environment variable or key of a user's or a project's file moves
// it or turns it off; the only way to another directory is a build of
// FreeCode (tests bind a directory over it in a mount namespace).
//
// A machine has one main file, managed-settings.json, and drop-ins,
// managed-settings.d/*.json, read after it in name order; each may hold
// any of the keys below, and LoadManaged merges them so that a later file
// can only add: lists are joined, a true switch stays true, a sandbox
// minimum takes the stricter value.

// ScopeManaged is the scope of the servers a managed file ships.
const ScopeManaged = "managed"

// Managed is the effective managed policy of the machine. The zero value
// (and a nil *Managed) is no policy: nothing blocked, no managed rules.
type Managed struct {
	// Files are the managed files read, in the order they apply.
	Files []ManagedFile

	// Allowed is the union of "allowedMcpServers": when non-nil, a
	// server no entry matches is blocked (an empty non-nil list blocks
	// every server but the managed ones).
	Allowed []ServerMatch
	// Denied is "deniedMcpServers": a server an entry matches is blocked,
	// whatever Allowed says.
	Denied []ServerMatch

	// Servers are the servers the organization ships ("mcpServers", in
	// Claude Code's shape: a map of name to entry), with ScopeManaged.
	// They run for every user, are not subject to Allowed, and a user's
	// or project's entry of the same name is shadowed by them.
	Servers []Server
	// Exclusive ("exclusive": true) allows only Servers: every other
	// server is blocked.
	Exclusive bool

	// Permissions are the managed rules. A managed deny or ask rule holds
	// against every other rule, an "always allow" included.
	Permissions []ManagedRule
	// ManagedRulesOnly is "allowManagedPermissionRulesOnly": allow rules
	// of every other scope, and the session's, are ignored.
	ManagedRulesOnly bool

	// Sandbox is the minimum every local server's sandbox is held to.
	Sandbox ManagedSandbox

	// Audit is where and how the audit trail is kept.
	Audit ManagedAudit

	// Registry fixes the MCP Registry `freecode mcp search`, install,
	// outdated and update ask, over mcp.registry.url and --registry.
	Registry ManagedRegistry

	// Telemetry turns the OpenTelemetry export of tool calls on or off
	// and points it somewhere, over the user's OTEL_* environment.
	Telemetry ManagedTelemetry

	// Message is shown with every refusal the policy makes ("ask
	// #it-help for a new server"); the last file's that sets one.
	Message string

	// Problems are what the files hold that FreeCode could not apply,
	// with file, line and column: a key it does not know is a warning, a
	// value of the wrong type an error. A managed file that does not
	// parse is an error of LoadManaged instead.
	Problems []ManagedProblem
}

// ManagedFile is one managed file read.
type ManagedFile struct {
	Path string `json:"path"`
	// UserWritable reports that the user FreeCode runs as could change
	// or replace the file (it, or its directory, is theirs or writable by
	// them): a policy they can undo, which status and `freecode policy`
	// report as such.
	UserWritable bool `json:"userWritable,omitempty"`
	// Allowlist and Exclusive say that the file has "allowedMcpServers"
	// (an empty list too) and "exclusive": true: a refusal names the
	// files that made it.
	Allowlist bool `json:"allowlist,omitempty"`
	Exclusive bool `json:"exclusive,omitempty"`
}

// ManagedProblem is a Problem of one managed file.
type ManagedProblem struct {
	Path string
	Problem
}

// ServerMatch is one entry of allowedMcpServers or deniedMcpServers. It
// names exactly one of:
//
//	{"serverName": "github"}                        a server's name, exactly
//	{"serverCommand": ["npx", "-y", "pkg@1.2.3"]}   a local server's argv, exactly
//	{"serverUrl": "https://*.example.com/*"}        a remote server's URL; * matches any run of characters
//	{"registryName": "io.github.owner/server"}      a server installed from the MCP Registry
//
// A registryName entry may add "registryVersion", a range of the versions
// it covers (">=1.2.0 <2.0.0", "1.4.2 || >=2.1"; managedversion.go).
type ServerMatch struct {
	Name     string
	Command  []string
	URL      string
	Registry string
	// RegistryVersion is the entry's registryVersion as written; ""
	// covers every version.
	RegistryVersion string

	// Invalid marks an entry of allowedMcpServers that is none of the
	// shapes above (no key, two, a value of the wrong type, a key
	// FreeCode does not know), which a problem reports. It allows no
	// server, but its serverUrl or serverCommand key still counts as one
	// (see Check): a broken URL entry does not let a name alone allow a
	// remote server. Name, URL and Command hold what it wrote, a value of
	// another type as its JSON text. A broken entry of deniedMcpServers
	// is never Invalid: each of its keys that reads denies on its own.
	Invalid bool

	// Where the entry is: the list ("allowedMcpServers" or
	// "deniedMcpServers"), its index in that list of its file, the file,
	// and the entry's line and column.
	List      string
	Index     int
	Path      string
	Line, Col int
}

// ManagedRule is one pattern of the managed "permissions" block.
type ManagedRule struct {
	Pattern string `json:"pattern"`
	Effect  string `json:"effect"` // "allow", "ask" or "deny"
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Col     int    `json:"col"`
}

// ManagedSandbox is the sandbox minimum ("sandbox" of a managed file).
type ManagedSandbox struct {
	// Require is "require": "" (nothing required), "project" (every
	// project server runs sandboxed, whatever its entry says), or "all"
	// (every local server does).
	Require string `json:"require,omitempty"`
	// AllowedDomains, when non-nil, is the ceiling of a sandboxed
	// server's network ("allowedDomainsCeiling"): a domain of its
	// allow-list outside it is dropped, and network "all" becomes the
	// ceiling's domains. Across files, the intersection.
	AllowedDomains []string `json:"allowedDomainsCeiling"`
	// DenyRead are paths every sandboxed server is refused, beyond the
	// sandbox's own list ("denyRead").
	DenyRead []string `json:"denyRead,omitempty"`
}

// The values of ManagedSandbox.Require.
const (
	RequireSandboxProject = "project"
	RequireSandboxAll     = "all"
)

// ManagedTelemetry is the "telemetry" block of a managed file: the
// organization's say over the OpenTelemetry export (package telemetry),
// which wins over the user's block (Telemetry, mcp.telemetry) and
// environment. A project's file has no such block.
type ManagedTelemetry struct {
	// Enabled is "enabled": nil when no file sets it (the user's block
	// or environment decides, and this block's endpoint, protocol and
	// headers are not used), else on or off whatever those say.
	Enabled *bool `json:"enabled,omitempty"`
	// Endpoint is the OTLP base URL: for http/protobuf the URL /v1/traces,
	// /v1/metrics and /v1/logs are added to ("https://otel.example.com:4318"),
	// for grpc the collector's address as it is; "" leaves it to the
	// user's.
	Endpoint string `json:"endpoint,omitempty"`
	// Protocol is TelemetryProtocol or TelemetryProtocolGRPC; "" leaves
	// it to the user's.
	Protocol string `json:"protocol,omitempty"`
	// Headers are sent with every export (an ingest key, say), in place
	// of the user's; values may hold ${env:NAME} and ${secret:NAME}.
	// Never shown or logged.
	Headers map[string]string `json:"-"`
	// Arguments is "arguments": whether a call's arguments and result are
	// exported on its span (redacted as audit.arguments values are),
	// whatever the user's block says; nil leaves it to the user's.
	Arguments *bool `json:"arguments,omitempty"`
	// From is the managed file that set each key ("enabled", "endpoint",
	// "protocol", "headers", "arguments"): a later file's key replaces an
	// earlier one's, so the block may come from several (freecode policy).
	From map[string]string `json:"from,omitempty"`
}

// TelemetryProtocol is the default OTLP protocol, OTLP/HTTP with
// protobuf bodies; TelemetryProtocolGRPC is the other one.
const TelemetryProtocol = "http/protobuf"

// ManagedRegistry is the "registry" block of a managed file: the MCP
// Registry (an organization's own, or a mirror it vets) every `freecode
// mcp` registry command asks, whatever the user's mcp.registry.url or
// --registry says.
type ManagedRegistry struct {
	// URL is "url", the registry's base URL: https, or http to a loopback
	// address. "" leaves the choice to the user.
	URL string `json:"url,omitempty"`
	// Path is the managed file that set URL, which a refused --registry
	// names.
	Path string `json:"path,omitempty"`
}

// ManagedAudit is the "audit" block of a managed file.
type ManagedAudit struct {
	// Dir moves the audit trail (a log shipper's directory, say); ""
	// keeps it beside the config file. FreeCode writes it as the user.
	Dir string `json:"dir,omitempty"`
	// Arguments records the values of a call's arguments (redacted as
	// logs are), not only their hash.
	Arguments bool `json:"arguments,omitempty"`
	// MaxFileBytes is the size at which the current file is rotated; 0
	// is the default.
	MaxFileBytes int64 `json:"maxFileBytes,omitempty"`
}

// Blocked is why the policy blocks a server.
type Blocked struct {
	// Reason says what blocked it and where, for status, logs and
	// refusals: "blocked by your organization's policy:
	// deniedMcpServers[2] in /etc/freecode/managed-settings.json".
	Reason string
	// Message is the policy's Message, "" if it has none.
	Message string
}

// String is Reason, then Message after " — " if there is one.
func (b *Blocked) String() string {
	if b.Message == "" {
		return b.Reason
	}
	return b.Reason + " — " + b.Message
}
