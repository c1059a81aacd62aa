package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/manifest"
)

// Runner runs the tools of one server, or one built-in: what the
// orchestrator needs of whatever runs a tool. The workspace's runs an MCP
// server's tools through its connection; a built-in's embeds NoServer.
type Runner interface {
	// CallTool makes the call, within ctx, and returns what it came to.
	// An error that wraps ErrConnectionLost, ErrNotConnected or a
	// *RefusedError tells the orchestrator what became of the call; a
	// tool's own failure is a result with IsError.
	CallTool(ctx context.Context, call Call) (Outcome, error)
	// ToolTimeout is the server's toolTimeout; 0 means the orchestrator's
	// default (Options.ToolTimeout).
	ToolTimeout() time.Duration
	// Ready returns once the server is up for a call, starting one that
	// runs on demand, within ctx, and once the tools it listed are
	// registered (see ready.go). release ends the hold: a server on
	// demand does not idle out while it is held.
	Ready(ctx context.Context) (release func(), err error)
}

// NoServer is embedded by the Runner of a tool that has no server, a
// built-in: it is ready at once and takes the orchestrator's default
// timeout.
type NoServer struct{}

// ToolTimeout returns 0: the orchestrator's default applies.
func (NoServer) ToolTimeout() time.Duration { return 0 }

// Ready returns at once: there is nothing to start.
func (NoServer) Ready(context.Context) (func(), error) { return func() {}, nil }

// Progress is one progress notification of a running call.
type Progress struct {
	Progress float64
	Total    float64
	Message  string
}

// Tool is one registered tool: a built-in or an MCP server's tool. Both kinds
// go through the same Runner interface, validation and permission gate.
type Tool struct {
	ID          string // what permission rules match
	Server      string // "" for a built-in
	Name        string // the name the Runner is called with (the server's original name)
	Title       string
	Description string
	// ReadOnly is true only when the tool's annotations say readOnlyHint: true.
	ReadOnly bool
	// Destructive and OpenWorld are the annotations' hints with the MCP
	// defaults applied (both true when absent).
	Destructive bool
	OpenWorld   bool
	// Idempotent is the annotations' idempotentHint (default false).
	Idempotent  bool
	InputSchema json.RawMessage // kept whole, for validation
	// OutputSchema is the tool's outputSchema as its server sent it, nil
	// when it declared none. Providers never see it; FreeCode's own MCP
	// server lists it.
	OutputSchema json.RawMessage
	Runner       Runner
	// UI is what the tool declares of the MCP Apps extension: its view
	// and its audience (apps.go); nil for a tool that declares nothing.
	UI *ToolUI
	// Review is set when the tool's definition awaits the user's review
	// (see Review); nil for built-ins and for tools as they were accepted.
	Review *Review

	// Builtin and Order place built-ins first, in their fixed order, in the
	// provider-facing definitions.
	Builtin bool
	Order   int

	alias string // set by the registry when ID is over toolid.MaxNameLen
	// hinted records that the server stated readOnlyHint: true or a
	// destructiveHint, so that ReadOnly and Destructive are its word, not
	// MCP's defaults: what a permission prompt says of the tool.
	hinted bool
	// noSchema records that the server sent no inputSchema (InputSchema
	// then holds an empty object schema), so the provider conversion can
	// report it instead of it passing silently.
	noSchema bool

	validatorOnce sync.Once
	validator     *Validator
	validatorErr  error
}

// Alias returns the provider-facing name of a tool whose id is longer than
// toolid.MaxNameLen, or "".
func (t *Tool) Alias() string { return t.alias }

// ProviderName is the name the tool is sent to providers under.
func (t *Tool) ProviderName() string {
	if t.alias != "" {
		return t.alias
	}
	return t.ID
}

// Info returns the tool's ToolInfo.
func (t *Tool) Info() ToolInfo {
	info := ToolInfo{
		ID:           t.ID,
		Server:       t.Server,
		Name:         t.Name,
		Title:        t.Title,
		Description:  t.Description,
		ReadOnly:     t.ReadOnly,
		Idempotent:   t.Idempotent,
		InputSchema:  t.InputSchema,
		OutputSchema: t.OutputSchema,
		Alias:        t.alias,
		UI:           t.UI,
	}
	if rv := t.Review; rv != nil {
		info.DefinitionChanged = rv.Kind == manifest.KindChanged || rv.Rejected
		info.New = rv.Kind == manifest.KindNew
		info.Hidden = rv.Hidden
	}
	if !t.ReadOnly {
		d := t.Destructive
		info.Destructive = &d
	}
	ow := t.OpenWorld
	info.OpenWorld = &ow
	return info
}

// compiledValidator compiles the tool's input schema once, on first use:
// most tools of most servers are never called.
func (t *Tool) compiledValidator() (*Validator, error) {
	t.validatorOnce.Do(func() {
		t.validator, t.validatorErr = NewValidator(t.InputSchema)
	})
	return t.validator, t.validatorErr
}

// emptyObjectSchema stands in for a tool that declares no input schema.
var emptyObjectSchema = json.RawMessage(`{"type":"object"}`)

// newMCPTool builds the Tool for one tools/list entry; id is already assigned.
func newMCPTool(server, id string, st *mcpsdk.Tool, r Runner) (*Tool, error) {
	schema, err := rawSchema(st.InputSchema)
	if err != nil {
		return nil, err
	}
	noSchema := schema == nil
	if noSchema {
		schema = emptyObjectSchema
	}
	out, err := rawSchema(st.OutputSchema)
	if err != nil {
		return nil, err
	}
	t := &Tool{
		ID:           id,
		Server:       server,
		Name:         st.Name,
		Title:        st.Title,
		Description:  st.Description,
		Destructive:  true,
		OpenWorld:    true,
		InputSchema:  schema,
		OutputSchema: out,
		Runner:       r,
		UI:           toolUIOf(st.Meta),
		noSchema:     noSchema,
	}
	if a := st.Annotations; a != nil {
		if t.Title == "" {
			t.Title = a.Title
		}
		t.ReadOnly = a.ReadOnlyHint
		t.Idempotent = a.IdempotentHint
		t.hinted = a.ReadOnlyHint || a.DestructiveHint != nil
		if a.DestructiveHint != nil {
			t.Destructive = *a.DestructiveHint
		}
		if a.OpenWorldHint != nil {
			t.OpenWorld = *a.OpenWorldHint
		}
	}
	if t.ReadOnly {
		t.Destructive = false
	}
	return t, nil
}

// rawSchema encodes a tools/list inputSchema or outputSchema; nil means
// there was none.
func rawSchema(v any) (json.RawMessage, error) {
	switch s := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if len(bytes.TrimSpace(s)) == 0 || string(bytes.TrimSpace(s)) == "null" {
			return nil, nil
		}
		return s, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if string(b) == "null" {
		return nil, nil
	}
	return b, nil
}
