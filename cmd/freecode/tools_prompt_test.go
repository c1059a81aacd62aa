package main

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/freecode/freecode/orchestrator"
)

// The terminal prompt says what the tool's annotations say, and lists the
// answers one a line, the key first. Before, a tool its server annotated
// destructive was "destructive or unannotated", and the choices were
// "[y]es once / [N]o / [a]lways (user settings)" after a line "(always for
// this project only: …)".
func TestPromptWording(t *testing.T) {
	tests := []struct {
		name string
		req  orchestrator.Request
		kind string
	}{
		{"annotated destructive", orchestrator.Request{Annotated: true, Destructive: true}, "(destructive)"},
		{"not annotated", orchestrator.Request{Destructive: true}, "(not annotated: it may change things)"},
		{"annotated not destructive", orchestrator.Request{Annotated: true}, "(annotated not destructive: it may change things, only adding to them)"},
		{"read-only", orchestrator.Request{Annotated: true, ReadOnly: true}, "(read-only)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			p := &promptApprover{in: bufio.NewReader(strings.NewReader("\n")), out: &out}
			tc.req.Tool, tc.req.Arguments, tc.req.Reason, tc.req.ProjectTrusted = "mcp__demo__delete_file", json.RawMessage(`{}`), "no rule", true
			if _, err := p.Approve(t.Context(), tc.req); err != nil {
				t.Fatal(err)
			}
			if first, _, _ := strings.Cut(out.String(), "\n"); first != "mcp__demo__delete_file "+tc.kind+" wants to run with {}" {
				t.Errorf("first line %q, want it to say %s", first, tc.kind)
			}
		})
	}

	var out strings.Builder
	p := &promptApprover{in: bufio.NewReader(strings.NewReader("\n")), out: &out}
	req := orchestrator.Request{Tool: "mcp__demo__delete_file", Arguments: json.RawMessage(`{}`), Reason: "a new tool", Annotated: true, Destructive: true,
		Review: &orchestrator.RequestReview{Diff: "+ delete_file"}}
	if _, err := p.Approve(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	want := `mcp__demo__delete_file (destructive) wants to run with {}
  why asked: a new tool
  | + delete_file
  y  allow this call once
  n  deny it (Enter)
  a  always allow it: a rule in your user settings (~/.freecode/settings.json)
     (always allow it in this project: not offered, this project is not trusted; run ` + "`freecode trust`" + ` first)
  c  accept this definition and allow this call once
Allow? [y/N/a/c]: `
	if got := out.String(); got != want {
		t.Errorf("prompt:\n%s\nwant:\n%s", got, want)
	}
}

// Where the organization's rule leaves an "always allow" no effect, the
// prompt does not offer it, says why, and takes "a" for a denial.
func TestPromptNoAlwaysAllow(t *testing.T) {
	var out strings.Builder
	p := &promptApprover{in: bufio.NewReader(strings.NewReader("a\n")), out: &out}
	why := `your organization's ask rule "mcp__demo" in /etc/freecode/managed-settings.json asks before every call`
	req := orchestrator.Request{Tool: "mcp__demo__delete_file", Arguments: json.RawMessage(`{}`), Annotated: true, Destructive: true,
		Reason: `your organization's ask rule "mcp__demo" in /etc/freecode/managed-settings.json`, ProjectTrusted: true, NoAlwaysAllow: why}
	ans, err := p.Approve(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Decision != orchestrator.Deny {
		t.Errorf("answer to \"a\": %+v, want a denial", ans)
	}
	want := `mcp__demo__delete_file (destructive) wants to run with {}
  why asked: your organization's ask rule "mcp__demo" in /etc/freecode/managed-settings.json
  y  allow this call once
  n  deny it (Enter)
     (always allow it: not offered, ` + why + `)
Allow? [y/N]: `
	if got := out.String(); got != want {
		t.Errorf("prompt:\n%s\nwant:\n%s", got, want)
	}
}
