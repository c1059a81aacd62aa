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
