package mcpserve

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/termtext"
	"github.com/freecode/freecode/orchestrator"
)

// The choices of the permission form.
const (
	choiceAllowOnce = "allowOnce"
	choiceDeny      = "deny"
)

// approvalSchema is the permission form: one required choice, as a titled
// single-select enum (MCP 2025-11-25), which clients show as a select or
// radio buttons.
var approvalSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"decision": map[string]any{
			"type":        "string",
			"title":       "Permission",
			"description": "Run this tool call once, or deny it.",
			"oneOf": []any{
				map[string]any{"const": choiceAllowOnce, "title": "Allow once"},
				map[string]any{"const": choiceDeny, "title": "Deny"},
			},
		},
	},
	"required": []string{"decision"},
}

// maxShownArgs bounds how much of a call's arguments the form shows.
const maxShownArgs = 2000

// canElicit reports whether the session's client declared it can be sent
// a form elicitation: the elicitation capability with form mode, or with
// no mode at all, which 2025-06-18 clients send and which means form.
func canElicit(ss *mcpsdk.ServerSession) bool {
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil
}

// elicitApprover asks the client of one session, by elicitation, whether
// a call may run.
type elicitApprover struct {
	session *mcpsdk.ServerSession
}

var _ orchestrator.Approver = (*elicitApprover)(nil)

// Approve sends the permission form and reads the answer: accepting with
// "allow once" allows this call; anything else (deny, decline, cancel)
// denies it. An error (the client failed, or ctx ended) is counted by the
// orchestrator as a denial.
func (a *elicitApprover) Approve(ctx context.Context, req orchestrator.Request) (orchestrator.Answer, error) {
	res, err := a.session.Elicit(ctx, &mcpsdk.ElicitParams{
		Mode:            "form",
		Message:         approvalMessage(req),
		RequestedSchema: approvalSchema,
	})
	if err != nil {
		return orchestrator.Answer{}, fmt.Errorf("elicitation: %w", err)
	}
	if res.Action == "accept" && res.Content["decision"] == choiceAllowOnce {
		return orchestrator.Answer{Decision: orchestrator.AllowOnce}, nil
	}
	return orchestrator.Answer{Decision: orchestrator.Deny}, nil
}

// approvalMessage is the text of the permission form. Everything in it but
// FreeCode's own words comes from a model or a server, so it is escaped
// as the CLI escapes it: no control or bidirectional character can make
// the form read differently from the call that runs.
func approvalMessage(req orchestrator.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "FreeCode asks permission to run %s", termtext.Escape(req.Tool))
	if req.Server != "" {
		fmt.Fprintf(&b, " (MCP server %q)", termtext.Escape(req.Server))
	}
	if !req.ReadOnly {
		b.WriteString(", which is not read-only")
	}
	fmt.Fprintf(&b, ".\nWhy it asks: %s.", termtext.Escape(req.Reason))
	args := string(termtext.JSON(req.Arguments))
	if utf8.RuneCountInString(args) > maxShownArgs {
		cut := []rune(args)[:maxShownArgs]
		args = string(cut) + fmt.Sprintf("… (%d characters in all)", utf8.RuneCountInString(args))
	}
	fmt.Fprintf(&b, "\nArguments: %s", args)
	if req.Review != nil {
		// The tool's definition changed since it was accepted, or is new:
		// the change is what the user judges the call by. Allowing here
		// does not accept it (this form has no such choice).
		fmt.Fprintf(&b, "\nThe tool's definition awaits your review:\n%s", termtext.EscapeLines(req.Review.Diff))
	}
	return b.String()
}
