package mcpserve

import (
	"context"
	"errors"
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
var approvalSchema = decisionSchema("Run this tool call once, or deny it.",
	map[string]any{"const": choiceAllowOnce, "title": "Allow once"},
	map[string]any{"const": choiceDeny, "title": "Deny"})

// denyOnlySchema is the form of a call too large to be shown whole: what
// the user cannot see, the user cannot allow.
var denyOnlySchema = decisionSchema("This call cannot be shown whole, so it cannot be allowed here.",
	map[string]any{"const": choiceDeny, "title": "Deny"})

func decisionSchema(desc string, choices ...any) map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"decision": map[string]any{
				"type":        "string",
				"title":       "Permission",
				"description": desc,
				"oneOf":       choices,
			},
		},
		"required": []string{"decision"},
	}
}

// maxShownArgs bounds the arguments the form shows, in characters. A call
// whose arguments are longer is listed key by key with long values cut,
// and cannot be allowed from the form.
const maxShownArgs = 2000

// maxShownValue is how much of one value the listing of a long call shows.
const maxShownValue = 80

// canElicit reports whether a client's capabilities say it can be sent a
// form elicitation: the elicitation capability with form mode, or with no
// mode at all, which 2025-06-18 clients send and which means form.
func canElicit(caps *mcpsdk.ClientCapabilities) bool {
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	e := caps.Elicitation
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
//
// A call whose arguments cannot be shown whole is shown without "allow
// once" and denied whatever the answer: a cut would let a long value hide
// the part of the call that matters.
func (a *elicitApprover) Approve(ctx context.Context, req orchestrator.Request) (orchestrator.Answer, error) {
	msg, whole := approvalMessage(req)
	schema := approvalSchema
	if !whole {
		schema = denyOnlySchema
	}
	res, err := a.session.Elicit(ctx, &mcpsdk.ElicitParams{
		Mode:            "form",
		Message:         msg,
		RequestedSchema: schema,
	})
	if !whole {
		// Whatever came back: even an answer the form did not offer
		// (which the SDK refuses as not matching the schema) says nothing.
		return orchestrator.Answer{}, errTooLargeToShow
	}
	if err != nil {
		return orchestrator.Answer{}, fmt.Errorf("elicitation: %w", err)
	}
	if res.Action == "accept" && res.Content["decision"] == choiceAllowOnce {
		return orchestrator.Answer{Decision: orchestrator.AllowOnce}, nil
	}
	return orchestrator.Answer{Decision: orchestrator.Deny}, nil
}

// errTooLargeToShow is the denial of a call the form could not show whole.
var errTooLargeToShow = errors.New("its arguments are too large to be shown whole in the permission form, which therefore cannot allow it")

// approvalMessage is the text of the permission form, and whether it shows
// the call's arguments whole. Everything in it but FreeCode's own words
// comes from a model or a server, so it is escaped as the CLI escapes it:
// no control or bidirectional character can make the form read
// differently from the call that runs.
func approvalMessage(req orchestrator.Request) (string, bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "FreeCode asks permission to run %s", termtext.Escape(req.Tool))
	if req.Server != "" {
		fmt.Fprintf(&b, " (MCP server %q)", termtext.Escape(req.Server))
	}
	if !req.ReadOnly {
		b.WriteString(", which is not read-only")
	}
	fmt.Fprintf(&b, ".\nWhy it asks: %s.", termtext.Escape(req.Reason))
	args, whole := shownArgs(req.Arguments)
	if whole {
		fmt.Fprintf(&b, "\nArguments: %s", args)
	} else {
		fmt.Fprintf(&b, "\nThe arguments are too long to be shown whole here (%d characters), so this form cannot allow the call."+
			" Every key is listed; values longer than %d characters are cut:\n%s", utf8.RuneCount(termtext.JSON(req.Arguments)), maxShownValue, args)
	}
	if req.Review != nil {
		// The tool's definition changed since it was accepted, or is new:
		// the change is what the user judges the call by. Allowing here
		// does not accept it (this form has no such choice).
		fmt.Fprintf(&b, "\nThe tool's definition awaits your review:\n%s", termtext.EscapeLines(req.Review.Diff))
	}
	return b.String(), whole
}
