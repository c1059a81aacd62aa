package orchestrator

import (
	"encoding/json"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/permissions"
)

// ToolInfo describes one registered tool: what frontends list of it (the
// protocol's ToolInfo, which server/wire converts it to), and what
// FreeCode's MCP server lists.
type ToolInfo struct {
	ID          string
	Server      string
	Name        string
	Title       string
	Description string
	ReadOnly    bool
	Destructive *bool
	OpenWorld   *bool
	// Idempotent is the tool's idempotentHint. It and OutputSchema are
	// not in the protocol's ToolInfo; FreeCode's MCP server lists them.
	Idempotent  bool
	InputSchema json.RawMessage
	// OutputSchema is the tool's outputSchema, when its server declared one.
	OutputSchema json.RawMessage
	// Alias is the provider-facing name when ID is longer than 64 characters.
	Alias string
	// DefinitionChanged says that the tool's server lists another
	// definition than the one the user accepted (pinned): what is shown
	// here, and to models, is the accepted one, and a call asks with the
	// change shown. New says that the tool is new on a server whose tools
	// were pinned already, and not yet accepted.
	DefinitionChanged bool
	New               bool
	// Hidden says that the tool is kept from models (its changed
	// definition cannot be stood for by the accepted one, or was
	// rejected): not in the provider definitions, tool_search or the list
	// of FreeCode's MCP server. Frontends list it, marked changed.
	Hidden bool
	// UI is what the tool declares of the MCP Apps extension (its ui://
	// view, its audience); nil when it declares nothing. A tool that is
	// not for models (UI.ForModel) is listed to frontends, for the app
	// path, and offered to no model.
	UI *ToolUI
	// AllowedBy is the allow rule that lets the tool's calls run without
	// asking, as the rules in force decide now; nil when none does. The
	// registry leaves it nil: the workspace, which holds the rules, fills
	// it in what it lists.
	AllowedBy *permissions.Rule
}

// ToolCall is one call a model asked for, or an app. Tool is an id or an
// alias.
type ToolCall struct {
	CallID    string
	Tool      string
	Arguments json.RawMessage
	// App is the server whose app (an MCP Apps view a frontend renders)
	// makes the call; "" for a model's call. An app may call only its own
	// server's tools whose visibility includes "app"; a model only the
	// tools whose visibility includes "model".
	App string
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

// ToolResult is the outcome of one ToolCall. Every failure (denied,
// invalid, timed out, server gone) is a result with IsError and a readable
// text content, never a Go error.
type ToolResult struct {
	CallID            string
	Content           []mcpsdk.Content
	StructuredContent any
	IsError           bool
	Decision          Decision
	DurationMs        int64
	Truncated         *Truncated
	// OutcomeUnknown: the call was sent and its answer lost, and it was
	// not retried because the tool is neither read-only nor idempotent
	// (see Retryable). The server may or may not have run it.
	OutcomeUnknown bool
	// Task is set when the call runs as a task on its server, which goes
	// on after the result (ExecOptions.Tasks; tasks.go): the result says
	// "running as task <id>".
	Task *Task
}

// Truncated tells how much of a result the cap cut and where the whole of
// it was saved. The characters counted are those of its text and of its
// structuredContent's JSON: the text is cut at the cap, the
// structuredContent shown whole or not at all. SavedTo is the file of the
// whole text when the text was cut, else that of the structuredContent;
// the notes appended to the content name every file.
//
// Its JSON is what FreeCode's MCP server puts in a result's
// _meta["freecode/truncated"] (mcpserve); frontends get the protocol's
// Truncated (server/wire).
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
