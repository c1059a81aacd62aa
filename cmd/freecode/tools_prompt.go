package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/freecode/freecode/internal/termtext"
	"github.com/freecode/freecode/orchestrator"
)

// isTerminal reports whether r is an interactive terminal; a variable so
// that tests can answer prompts through a pipe.
var isTerminal = func(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && ttyFd(f.Fd())
}

// promptApprover asks on the terminal: y allows once, "always" (or a)
// writes an allow rule to ~/.freecode/settings.json, "local" (or l) to the
// project's settings.local.json, and for a tool whose definition changed
// or is new, "accept" (or c) accepts the definition shown and allows
// once; anything else denies. "local" is offered
// only in a trusted project: an untrusted project's allow rules are
// ignored, so the rule would not hold beyond this call.
type promptApprover struct {
	in  *bufio.Reader
	out io.Writer
}

var _ orchestrator.Approver = (*promptApprover)(nil)

func (p *promptApprover) Approve(ctx context.Context, req orchestrator.Request) (orchestrator.Answer, error) {
	fmt.Fprintf(p.out, "%s (%s) wants to run with %s\n  why asked: %s\n", req.Tool, annotations(req), termtext.JSON(req.Arguments), termtext.Escape(req.Reason))
	keys := "y/N"
	if req.Review != nil {
		// What changed is what the user judges the call by; it is the
		// server's text.
		for line := range strings.Lines(req.Review.Diff) {
			fmt.Fprintf(p.out, "  | %s\n", termtext.Escape(strings.TrimSuffix(line, "\n")))
		}
	}
	// The choices, one a line: the "always" ones say where the rule goes.
	fmt.Fprint(p.out, "  y  allow this call once\n  n  deny it (Enter)\n")
	always := req.NoAlwaysAllow == ""
	alwaysUser := "  a  always allow it: a rule in your user settings (~/.freecode/settings.json)\n"
	switch {
	case !always:
		// No rule of the user's could apply: the organization's decides.
		fmt.Fprintf(p.out, "     (always allow it: not offered, %s)\n", termtext.Escape(req.NoAlwaysAllow))
	case req.ProjectTrusted:
		keys += "/a/l"
		fmt.Fprint(p.out, alwaysUser, "  l  always allow it in this project: a rule in its .freecode/settings.local.json\n")
	default:
		keys += "/a"
		fmt.Fprint(p.out, alwaysUser, "     (always allow it in this project: not offered, this project is not trusted; run `freecode trust` first)\n")
	}
	if req.Review != nil {
		keys += "/c"
		fmt.Fprint(p.out, "  c  accept this definition and allow this call once\n")
	}
	fmt.Fprintf(p.out, "Allow? [%s]: ", keys)
	type line struct {
		s   string
		err error
	}
	ch := make(chan line, 1)
	go func() {
		s, err := p.in.ReadString('\n')
		ch <- line{s, err}
	}()
	var l line
	select {
	case l = <-ch:
	case <-ctx.Done():
		return orchestrator.Answer{}, ctx.Err()
	}
	if l.err != nil && !errors.Is(l.err, io.EOF) {
		return orchestrator.Answer{}, l.err
	}
	switch strings.ToLower(strings.TrimSpace(l.s)) {
	case "c", "accept":
		if req.Review != nil {
			return orchestrator.Answer{Decision: orchestrator.AllowOnce, AcceptDefinition: true}, nil
		}
	case "y", "yes":
		return orchestrator.Answer{Decision: orchestrator.AllowOnce}, nil
	case "a", "always":
		if always {
			return orchestrator.Answer{Decision: orchestrator.AllowAlways, Scope: orchestrator.ScopeUser}, nil
		}
	case "l", "local":
		if always && req.ProjectTrusted {
			return orchestrator.Answer{Decision: orchestrator.AllowAlways, Scope: orchestrator.ScopeLocal}, nil
		}
		fmt.Fprintln(p.out, "not allowed: a project rule needs a trusted project (`freecode trust`)")
	}
	return orchestrator.Answer{Decision: orchestrator.Deny}, nil
}

// annotations says what the tool's annotations say of it: the prompt
// shows a tool the server calls destructive as that, and one it said
// nothing of as what MCP then assumes, without claiming either of the
// other.
func annotations(req orchestrator.Request) string {
	switch {
	case req.ReadOnly:
		return "read-only"
	case !req.Annotated:
		return "not annotated: it may change things"
	case req.Destructive:
		return "destructive"
	}
	return "annotated not destructive: it may change things, only adding to them"
}
