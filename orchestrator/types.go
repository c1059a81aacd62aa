package orchestrator

import (
	"encoding/json"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolInfo describes one registered tool, shaped like the protocol's ToolInfo.
type ToolInfo struct {
	ID          string `json:"id"`
	Server      string `json:"server,omitempty"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description"`
	ReadOnly    bool   `json:"readOnly"`
	Destructive *bool  `json:"destructive,omitempty"`
	OpenWorld   *bool  `json:"openWorld,omitempty"`
	// Idempotent is the tool's idempotentHint. It and OutputSchema are
	// not in the protocol's ToolInfo (frontends check its fields); FreeCode's
	// MCP server lists them.
	Idempotent  bool            `json:"-"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema is the tool's outputSchema, when its server declared one.
	OutputSchema json.RawMessage `json:"-"`
	// Alias is the provider-facing name when ID is longer than 64 characters.
	Alias string `json:"alias,omitempty"`
	// DefinitionChanged says that the tool's server lists another
	// definition than the one the user accepted (pinned): what is shown
	// here, and to models, is the accepted one, and a call asks with the
	// change shown. New says that the tool is new on a server whose tools
	// were pinned already, and not yet accepted.
	DefinitionChanged bool `json:"definitionChanged,omitempty"`
	New               bool `json:"new,omitempty"`
	// Hidden says that the tool is kept from models (its changed
	// definition cannot be stood for by the accepted one, or was
	// rejected): not in the provider definitions, tool_search or the list
	// of FreeCode's MCP server. Frontends list it, marked changed.
	Hidden bool `json:"-"`
}

// ToolCall is one call a model asked for. Tool is an id or an alias.
type ToolCall struct {
	CallID    string          `json:"callId"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Decision says how the permission gate (or validation) handled a call.
type Decision string

// The decisions of a ToolResult, as the protocol (docs/protocol.md) spells them.
const (
	DecisionAllowed Decision = "allowed" // a rule or the default allowed it
	DecisionAsked   Decision = "asked"   // the user was asked and allowed it
	DecisionDenied  Decision = "denied"  // a rule, the user or the lack of a frontend denied it
	DecisionInvalid Decision = "invalid" // unknown tool or invalid arguments: never sent
)

// ToolResult is the outcome of one ToolCall, shaped like the protocol's ToolResult.
// Every failure (denied, invalid, timed out, server gone) is a result with
// IsError and a readable text content, never a Go error.
type ToolResult struct {
	CallID            string           `json:"callId"`
	Content           []mcpsdk.Content `json:"content"`
	StructuredContent any              `json:"structuredContent,omitempty"`
	IsError           bool             `json:"isError"`
	Decision          Decision         `json:"decision"`
	DurationMs        int64            `json:"durationMs"`
	Truncated         *Truncated       `json:"truncated,omitempty"`
}

// Truncated tells how much of a result the cap cut and where the whole of
// it was saved. The characters counted are those of its text and of its
// structuredContent's JSON: the text is cut at the cap, the
// structuredContent shown whole or not at all. SavedTo is the file of the
// whole text when the text was cut, else that of the structuredContent;
// the notes appended to the content name every file.
type Truncated struct {
	ShownChars int    `json:"shownChars"`
	TotalChars int    `json:"totalChars"`
	SavedTo    string `json:"savedTo,omitempty"`
}

// Text returns the concatenated text contents of r, one per line; handy for
// printing a result and for tests.
func (r *ToolResult) Text() string {
	var s []byte
	for _, c := range r.Content {
		if t, ok := c.(*mcpsdk.TextContent); ok {
			if len(s) > 0 {
				s = append(s, '\n')
			}
			s = append(s, t.Text...)
		}
	}
	return string(s)
}

func errorResult(callID string, d Decision, text string) ToolResult {
	return ToolResult{
		CallID:   callID,
		Content:  []mcpsdk.Content{&mcpsdk.TextContent{Text: text}},
		IsError:  true,
		Decision: d,
	}
}
