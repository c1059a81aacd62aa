// Package protocol is the frontend protocol of freecode-serve in Go: the
// method and notification names, the error codes, a wire type for every
// parameter, result and notification, and the table Methods that binds
// them. The sidecar (server/) and every Go frontend (internal/frontend:
// tests, the CLI's live commands, the demo frontend) encode and decode with
// these types and nothing else, and the TypeScript of the other frontends
// is generated from them (gen: frontend/src/protocol.gen.ts), so this
// package is the protocol's one source. docs/protocol.md describes the
// contract in prose.
//
// The wire is JSON-RPC 2.0 framed like LSP (Content-Length headers), on
// go.lsp.dev/jsonrpc2. The lifecycle (initialize, initialized, shutdown,
// exit, $/cancelRequest, workspace/didChangeWorkspaceFolders,
// window/logMessage) is LSP's, with go.lsp.dev/protocol's types; Codec
// encodes both kinds of payload.
//
// The types follow encoding/json's rules: field names are camelCase and
// optional fields are omitted when empty.
package protocol

import "go.lsp.dev/jsonrpc2"

// Version is the protocol's version, reported in initialize's result as
// capabilities.experimental.freecode.protocolVersion.
const Version = 1

// ServerName is the name the sidecar reports in initialize's serverInfo.
const ServerName = "freecode-serve"

// Requests from a frontend to the sidecar.
const (
	MethodServers          = "freecode/servers"
	MethodServersStart     = "freecode/servers/start"
	MethodServersStop      = "freecode/servers/stop"
	MethodServersRestart   = "freecode/servers/restart"
	MethodServersApprove   = "freecode/servers/approve"
	MethodTools            = "freecode/tools"
	MethodToolsDefinitions = "freecode/tools/definitions"
	MethodToolsExecute     = "freecode/tools/execute"
	MethodPermissions      = "freecode/permissions"
	MethodProject          = "freecode/project"
	MethodProjectTrust     = "freecode/project/trust"
	MethodServersLogin     = "freecode/servers/login"
	MethodServersLogout    = "freecode/servers/logout"
	MethodResources        = "freecode/resources"
	MethodResourcesRead    = "freecode/resources/read"
	MethodPrompts          = "freecode/prompts"
	MethodPromptsGet       = "freecode/prompts/get"
	MethodToolsReview      = "freecode/tools/review"
	MethodTasks            = "freecode/tasks"
	MethodTasksCancel      = "freecode/tasks/cancel"
	MethodTasksAdopt       = "freecode/tasks/adopt"
	// MethodPermissionsRemoveAllow takes an "always allow" answer back
	// (RemoveAllowParams, RemoveAllowResult).
	MethodPermissionsRemoveAllow = "freecode/permissions/removeAllow"
	// MethodChallenge may be sent before initialize: see ChallengeParams.
	MethodChallenge = "freecode/challenge"
	// MethodWebCode mints a one-time sign-in code for the page of a
	// sidecar listening on ws: (WebCodeResult).
	MethodWebCode = "freecode/web/code"
	// MethodSecretsSet stores a secret the user typed, for the servers
	// whose entries name it (SecretSetParams, SecretSetResult).
	MethodSecretsSet = "freecode/secrets/set"
	// MethodGatewayOpen opens the sidecar's MCP endpoints for an editor's
	// own chat, one per FreeCode server (GatewayResult).
	MethodGatewayOpen = "freecode/gateway/open"
	// MethodRegistrySearch searches the MCP Registry's latest versions
	// (RegistrySearchParams, RegistrySearchResult).
	MethodRegistrySearch = "freecode/registry/search"
	// MethodRegistryValues says what installing a registry server would
	// ask and how it would run (RegistryValuesParams, RegistryValuesResult).
	MethodRegistryValues = "freecode/registry/values"
	// MethodRegistryInstall installs a registry server: secrets into the
	// secret store, one entry into a config file (RegistryInstallParams,
	// RegistryInstallResult).
	MethodRegistryInstall = "freecode/registry/install"
)

// Requests from the sidecar to a frontend.
const (
	MethodPermissionRequest  = "freecode/permission/request"
	MethodElicitationRequest = "freecode/elicitation/request"
	MethodSamplingRequest    = "freecode/sampling/request"
)

// Notifications from the sidecar to its frontends.
const (
	NotifyServersStatus    = "freecode/servers/status"
	NotifyToolsChanged     = "freecode/tools/changed"
	NotifyToolsProgress    = "freecode/tools/progress"
	NotifyServersLog       = "freecode/servers/log"
	NotifyConfigProblems   = "freecode/config/problems"
	NotifyResourcesChanged = "freecode/resources/changed"
	NotifyPromptsChanged   = "freecode/prompts/changed"
	NotifyReviewNeeded     = "freecode/tools/reviewNeeded"
	NotifyTasksChanged     = "freecode/tasks/changed"
	NotifyRulesReview      = "freecode/rules/reviewNeeded"
)

// The LSP methods the protocol uses, as go.lsp.dev/protocol names them
// elsewhere; here so that both ends spell them once.
const (
	MethodInitialize                = "initialize"
	MethodInitialized               = "initialized"
	MethodShutdown                  = "shutdown"
	MethodExit                      = "exit"
	MethodCancelRequest             = "$/cancelRequest"
	MethodDidChangeWorkspaceFolders = "workspace/didChangeWorkspaceFolders"
	MethodLogMessage                = "window/logMessage"
	MethodShowDocument              = "window/showDocument"
)

// The error codes of the protocol besides JSON-RPC's own (-32600 invalid
// request, -32601 method not found, -32603 internal error).
const (
	// CodeInvalidParams: the params do not decode or miss a required
	// field; the message names the field.
	CodeInvalidParams jsonrpc2.Code = jsonrpc2.InvalidParams // -32602
	// CodeNotInitialized: the connection has not completed initialize.
	CodeNotInitialized jsonrpc2.Code = jsonrpc2.ServerNotInitialized // -32002
	// CodeRequestCancelled: the request was cancelled ($/cancelRequest).
	CodeRequestCancelled jsonrpc2.Code = -32800
	// CodeNoSuchServer: no MCP server, or no tool, of that name.
	CodeNoSuchServer jsonrpc2.Code = -32001
	// CodeNotYourTask: the task is another frontend's, or no frontend's
	// (freecode/tasks/cancel); the message says whose, and that
	// freecode/tasks/adopt makes it the caller's.
	CodeNotYourTask jsonrpc2.Code = -32003
)
