package protocol

import "encoding/json"

// What MCP servers offer beside tools (resources, prompts) and what they
// ask of the user (elicitation, sampling). The payloads that are MCP's own
// (a sampling request's params, a resource's contents, a prompt's
// messages) pass through as the server wrote them; the types below name
// their fields for frontends and for the fixtures, and are not a second
// definition of MCP: those that pass through say //protocol:open, which
// lets a frontend's check take the fields they do not name.

// ElicitationMode is how an elicitation asks: a form, or a URL to open.
type ElicitationMode string

// The modes of an ElicitationRequest.
const (
	ElicitForm ElicitationMode = "form"
	ElicitURL  ElicitationMode = "url"
)

// ElicitationRequest is the params of freecode/elicitation/request: an MCP
// server asks the user, during a call of the frontend's, to fill in a form
// (Mode "form", RequestedSchema a flat JSON Schema object of string,
// number, integer, boolean and enum properties) or to open a URL (Mode
// "url").
type ElicitationRequest struct {
	Server string `json:"server"`
	// CallID is the call during which the server asked; empty when it
	// cannot be told (several calls of the frontend in flight on that
	// server under an older MCP version) or when it asked during a
	// resources/read or prompts/get.
	CallID          string          `json:"callId,omitempty"`
	Mode            ElicitationMode `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
}

// ElicitationAction is the user's answer to an elicitation.
type ElicitationAction string

// The actions of an ElicitationResponse.
const (
	ElicitAccept  ElicitationAction = "accept"  // the form filled in, or the URL opened
	ElicitDecline ElicitationAction = "decline" // the user said no
	ElicitCancel  ElicitationAction = "cancel"  // the user dismissed it without choosing
)

// ElicitationResponse is the result of freecode/elicitation/request.
// Content, for an accepted form, holds the fields by name; the schema's
// defaults fill those it leaves out.
type ElicitationResponse struct {
	Action  ElicitationAction `json:"action"`
	Content map[string]any    `json:"content,omitempty"`
}

// SamplingRequest is the params of freecode/sampling/request: an MCP
// server asks the frontend's model for a completion. Params is the MCP
// sampling/createMessage params as the server sent them (messages,
// systemPrompt, modelPreferences, maxTokens, …).
type SamplingRequest struct {
	Server string          `json:"server"`
	CallID string          `json:"callId,omitempty"` // as in ElicitationRequest
	Params json.RawMessage `json:"params"`
}

// SamplingResult is the result of freecode/sampling/request: an MCP
// CreateMessageResult, passed to the server as it is. A frontend whose
// user refuses answers a JSON-RPC error instead, which the server gets as
// it is too.
//
//protocol:open
type SamplingResult struct {
	Role       Role         `json:"role"`
	Content    ContentBlock `json:"content"`
	Model      string       `json:"model"`
	StopReason string       `json:"stopReason,omitempty"`
}

// Role is who speaks a message, as MCP names them.
type Role string

// The roles of a message.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// ResourcesParams are the params of freecode/resources and freecode/prompts:
// one server's, or with Server empty every connected server's.
type ResourcesParams struct {
	Server string `json:"server,omitempty"`
}

// PromptsParams are the params of freecode/prompts, alike.
type PromptsParams = ResourcesParams

// ResourceInfo is one resource of a server (freecode/resources).
type ResourceInfo struct {
	Server      string `json:"server"`
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Description string `json:"description,omitempty"`
}

// ResourcesResult is the result of freecode/resources.
type ResourcesResult struct {
	Resources []ResourceInfo `json:"resources"`
}

// ReadResourceParams are the params of freecode/resources/read.
type ReadResourceParams struct {
	Server string `json:"server"`
	URI    string `json:"uri"`
}

// ReadResourceResult is the result of freecode/resources/read: the MCP
// ReadResourceResult as the server sent it, fields a newer MCP adds
// included.
//
//protocol:open
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
}

// ResourceContents is one part of a resource: text, or base64 bytes.
//
//protocol:open
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
	// Meta is the part's _meta as the server sent it: an MCP Apps view's
	// policy and permissions are in its "ui" (protocol.md, MCP Apps views).
	Meta map[string]any `json:"_meta,omitempty"`
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// PromptInfo is one prompt of a server (freecode/prompts).
type PromptInfo struct {
	Server      string           `json:"server"`
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// PromptsResult is the result of freecode/prompts.
type PromptsResult struct {
	Prompts []PromptInfo `json:"prompts"`
}

// GetPromptParams are the params of freecode/prompts/get.
type GetPromptParams struct {
	Server    string            `json:"server"`
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// GetPromptResult is the result of freecode/prompts/get: the MCP
// GetPromptResult as the server sent it, fields a newer MCP adds included.
//
//protocol:open
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// PromptMessage is one message of a prompt.
//
//protocol:open
type PromptMessage struct {
	Role    Role         `json:"role"`
	Content ContentBlock `json:"content"`
}

// ListChanged is the params of freecode/resources/changed and
// freecode/prompts/changed: a server's list changed (it connected, said
// list_changed, reconnected, stopped, …); read it again.
type ListChanged struct {
	Server string `json:"server"`
	Reason string `json:"reason"`
}
