package protocol

import "encoding/json"

// InitializationOptions is what a frontend puts in initialize's
// initializationOptions.
type InitializationOptions struct {
	// ConfigPath is the config file (default $FREECODE_CONFIG or
	// ~/.freecode/config.json). A sidecar that listens on a socket has
	// its config already and ignores it.
	ConfigPath string `json:"configPath,omitempty"`
	// Token is the token of serve.json: every socket frontend must send
	// it, once freecode/challenge showed the listener holds it. The stdio
	// sidecar needs none.
	Token string `json:"token,omitempty"`
	// Capabilities says which of the sidecar's requests about MCP
	// servers' questions the frontend answers. Nil: none.
	Capabilities *ClientCapabilities `json:"capabilities,omitempty"`
}

// ClientCapabilities are what a frontend answers beyond permission
// prompts: an MCP server's elicitation (freecode/elicitation/request) and
// sampling (freecode/sampling/request). The sidecar sends neither request
// to a frontend that did not say it answers it.
type ClientCapabilities struct {
	Elicitation bool `json:"elicitation,omitempty"`
	Sampling    bool `json:"sampling,omitempty"`
}

// InitializeResult is the result of initialize.
type InitializeResult struct {
	Capabilities ServerCapabilities `json:"capabilities"`
	ServerInfo   Implementation     `json:"serverInfo"`
}

// ServerCapabilities are the sidecar's capabilities: LSP's, of which it
// has none, and FreeCode's under experimental.
type ServerCapabilities struct {
	Experimental Experimental `json:"experimental"`
}

// Experimental holds FreeCode's capabilities.
type Experimental struct {
	FreeCode FreeCodeCapabilities `json:"freecode"`
}

// FreeCodeCapabilities says which version of this protocol the sidecar
// speaks.
type FreeCodeCapabilities struct {
	ProtocolVersion int `json:"protocolVersion"`
}

// Implementation names a program and its version.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ServersResult is the result of freecode/servers.
type ServersResult struct {
	Servers []ServerStatus `json:"servers"`
}

// ServerParams are the params of freecode/servers/start, stop and restart.
type ServerParams struct {
	Name string `json:"name"`
}

// ApproveParams are the params of freecode/servers/approve: approve, or
// with Approve false revoke, a project server.
type ApproveParams struct {
	Name    string `json:"name"`
	Approve bool   `json:"approve"`
	// EntryHash is the ServerApproval.EntryHash the user was shown:
	// required to approve, optional to revoke. When the entry changed
	// since, nothing is done and the error is -32602 naming entryHash.
	EntryHash string `json:"entryHash,omitempty"`
}

// ToolsParams are the params of freecode/tools: one server's tools, or
// with Server empty every tool.
type ToolsParams struct {
	Server string `json:"server,omitempty"`
}

// ToolsResult is the result of freecode/tools.
type ToolsResult struct {
	Tools []ToolInfo `json:"tools"`
}

// Format is a provider's format of tool definitions.
type Format string

// The formats of freecode/tools/definitions.
const (
	FormatAnthropic Format = "anthropic"
	FormatOpenAI    Format = "openai"
)

// DefinitionsParams are the params of freecode/tools/definitions.
type DefinitionsParams struct {
	Format Format `json:"format"`
}

// DefinitionsResult is the result of freecode/tools/definitions: the exact
// tools array to send to the provider, and its hash.
type DefinitionsResult struct {
	Hash  string        `json:"hash"`
	Tools ProviderTools `json:"tools"`
}

// ProviderTools is a provider's tools array, as JSON, byte for byte what
// the provider is sent.
//
//protocol:json array
type ProviderTools = json.RawMessage

// ExecuteParams are the params of freecode/tools/execute.
type ExecuteParams struct {
	Calls []ToolCall `json:"calls"`
	// Traceparent and Tracestate are the W3C trace context of the model
	// turn that produced the calls: the batch's spans join its trace,
	// and so do the servers'. A traceparent that is not one is ignored.
	Traceparent string `json:"traceparent,omitempty"`
	Tracestate  string `json:"tracestate,omitempty"`
}

// ExecuteResult is the result of freecode/tools/execute: one result per
// call, in the order of the calls.
type ExecuteResult struct {
	Results []ToolResult `json:"results"`
}

// TasksResult is the result of freecode/tasks: the tasks the sidecar
// follows and the latest that ended, the oldest first.
type TasksResult struct {
	Tasks []TaskInfo `json:"tasks"`
}

// TaskCancelParams are the params of freecode/tasks/cancel.
type TaskCancelParams struct {
	Server string `json:"server"`
	TaskID string `json:"taskId"`
}

// TaskAdoptParams are the params of freecode/tasks/adopt: the task to
// make the caller's.
type TaskAdoptParams struct {
	Server string `json:"server"`
	TaskID string `json:"taskId"`
}

// PermissionsResult is the result of freecode/permissions.
type PermissionsResult struct {
	Rules []Rule `json:"rules"`
}

// RemoveAllowParams are the params of freecode/permissions/removeAllow: an
// "always allow" answer taken back (a frontend's Undo). Rule is the rule
// the answer wrote, the tool's id; Scope the answer's scope, which names
// the file.
type RemoveAllowParams struct {
	Rule  string          `json:"rule"`
	Scope PermissionScope `json:"scope"`
}

// RemoveAllowResult is the result of freecode/permissions/removeAllow: the
// rule file, and whether it held the rule. The session's allow of the rule
// is gone either way.
type RemoveAllowResult struct {
	Path    string `json:"path"`
	Removed bool   `json:"removed"`
}

// SecretSetParams are the params of freecode/secrets/set: a secret's name,
// as an entry's ${secret:NAME} has it, and the value the user typed in a
// password input. The sidecar keeps it in the user's secret store (the OS
// keychain, else a 0600 file), never in a config file, a log or a status.
type SecretSetParams struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// SecretSetResult is the result of freecode/secrets/set.
type SecretSetResult struct {
	// Where says where the secret is kept: "the OS keychain", or the
	// file's path.
	Where string `json:"where"`
	// Started are the servers that failed for the want of it and were
	// started again, each connected or failed by the time of the answer
	// (their statuses follow as usual).
	Started []string `json:"started"`
}

// TrustParams are the params of freecode/project/trust.
type TrustParams struct {
	Trusted bool `json:"trusted"`
	// RulesHash, with Trusted, is the RulesReview.Hash the user was
	// shown: the project's rules are accepted only if they still hash to
	// it. Without it, trusting accepts the rules as they are.
	RulesHash string `json:"rulesHash,omitempty"`
}

// TrustResult is the result of freecode/project/trust.
type TrustResult struct {
	ProjectTrusted bool `json:"projectTrusted"`
}
