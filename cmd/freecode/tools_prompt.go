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
	in             *bufio.Reader
	out            io.Writer
	projectTrusted bool
}

var _ orchestrator.Approver = (*promptApprover)(nil)

func (p *promptApprover) Approve(ctx context.Context, req orchestrator.Request) (orchestrator.Answer, error) {
	kind := "destructive or unannotated"
	if req.ReadOnly {
		kind = "read-only"
	}
	fmt.Fprintf(p.out, "%s (%s) wants to run with %s\n  why asked: %s\n", req.Tool, kind, termtext.JSON(req.Arguments), termtext.Escape(req.Reason))
	if req.Review != nil {
		// What changed is what the user judges the call by; it is the
		// server's text.
		for line := range strings.Lines(req.Review.Diff) {
			fmt.Fprintf(p.out, "  | %s\n", termtext.Escape(strings.TrimSuffix(line, "\n")))
		}
		fmt.Fprint(p.out, "  ([c] accepts this definition and runs the call once)\n")
	}
	if p.projectTrusted {
		fmt.Fprint(p.out, "Allow? [y]es once / [N]o / [a]lways (user settings) / always for this project ([l]ocal): ")
	} else {
		fmt.Fprint(p.out, "  (always for this project only: this project is not trusted; run `freecode trust` first)\n")
		fmt.Fprint(p.out, "Allow? [y]es once / [N]o / [a]lways (user settings): ")
	}
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
		return orchestrator.Answer{Decision: orchestrator.AllowAlways, Scope: orchestrator.ScopeUser}, nil
	case "l", "local":
		if p.projectTrusted {
			return orchestrator.Answer{Decision: orchestrator.AllowAlways, Scope: orchestrator.ScopeLocal}, nil
		}
		fmt.Fprintln(p.out, "not allowed: a project rule needs a trusted project (`freecode trust`)")
	}
	return orchestrator.Answer{Decision: orchestrator.Deny}, nil
}
