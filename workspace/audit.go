package workspace

import (
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/freecode/freecode/internal/audit"
	"github.com/freecode/freecode/internal/canonjson"
	"github.com/freecode/freecode/internal/manifest"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/orchestrator"
)

// The audit trail (internal/audit): one hash-chained line per tool call of
// every frontend, the CLI and the gateway (the orchestrator's Auditor),
// and per approval, trust given or revoked, and server the policy blocks.
// It is kept where config.AuditDir says: beside the config file, or where
// the managed policy moves it. A line that cannot be written is logged and
// the call goes on: the trail records decisions, it does not make them.

// AuditCalls is the orchestrator's Auditor: one line per call, a batch's
// in one write, made by the trail's writer.
func (w *Workspace) AuditCalls(recs []orchestrator.CallRecord) {
	calls := make([]pendingCall, len(recs))
	args := w.trail.args.Load()
	var at time.Time
	if w.trail.events != nil {
		at = time.Now()
	}
	for i, rec := range recs {
		calls[i] = pendingCall{e: w.callEvent(rec), args: rec.Args, at: at, span: rec.Span}
		if args && len(rec.Args) > 0 {
			calls[i].e.Args = json.RawMessage{} // the writer puts the values in
		}
	}
	w.trail.send(trailItem{calls: calls}, false)
}

// callEvent is a call's line, but for its arguments.
func (w *Workspace) callEvent(rec orchestrator.CallRecord) audit.Event {
	e := audit.Event{
		Kind: audit.KindCall, Frontend: rec.Frontend, Tool: rec.Tool, Server: rec.Server,
		Decision: string(rec.Decision), Answer: string(rec.Answer),
	}
	if rec.Rule != nil {
		e.Rule = rec.Rule.Pattern
		e.RuleFile = rec.Rule.File
		if e.RuleFile == "" {
			e.RuleFile = rec.Rule.Source.String() // the session's
		}
	}
	if rec.Server != "" {
		if ids := w.identities.Load(); ids != nil {
			e.ServerIdentity = (*ids)[rec.Server]
		}
		e.DefinitionHash = w.pins.definitionHash(rec.Server, rec.Name)
	}
	if r := rec.Result; r != nil {
		e.DurationMs = r.DurationMs
		switch {
		case r.Decision == orchestrator.DecisionDenied:
			e.Outcome = audit.OutcomeDenied
		case r.Task != nil:
			e.Outcome, e.TaskID = audit.OutcomeTask, r.Task.ID
		case r.IsError || r.Decision == orchestrator.DecisionInvalid:
			e.Outcome = audit.OutcomeError
		default:
			e.Outcome = audit.OutcomeOK
		}
		if r.IsError || r.Decision == orchestrator.DecisionDenied || r.Decision == orchestrator.DecisionInvalid {
			e.Detail = firstText(r)
		}
	}
	return e
}

// firstText is the start of a result's first text, for the trail's
// detail of a refusal or a failure.
func firstText(r *orchestrator.ToolResult) string {
	const max = 300
	s := r.Text()
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// redactArgs returns the canonical arguments with the values of members
// whose names look like credentials (token, key, secret, password…) as
// "***", at any depth: the trail keeps what a call did, not its secrets;
// so does telemetry, when it exports arguments (telemetry.go). masked,
// if not nil, is given the strings of the values masked (those of
// minMasked bytes or more), for what else may repeat them.
func redactArgs(raw json.RawMessage, masked *[]string) json.RawMessage {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, val := range x {
				if mcp.SecretName(k) {
					if masked != nil {
						leaves(val, masked)
					}
					x[k] = "***"
				} else {
					x[k] = walk(val)
				}
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		}
		return v
	}
	b, err := canonjson.AppendValue(nil, walk(v))
	if err != nil {
		return nil
	}
	return b
}

// leaves adds the strings and numbers of v, at any depth, to out.
func leaves(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		if len(x) >= minMasked {
			*out = append(*out, x)
		}
	case float64:
		if s := strconv.FormatFloat(x, 'f', -1, 64); len(s) >= minMasked {
			*out = append(*out, s)
		}
	case map[string]any:
		for _, e := range x {
			leaves(e, out)
		}
	case []any:
		for _, e := range x {
			leaves(e, out)
		}
	}
}

// definitionHash returns the hash of the definition of server's tool
// name as it was last listed, for the audit trail; "" if not known.
func (p *pinner) definitionHash(server, name string) string {
	p.mu.Lock()
	lt := p.live[server]
	p.mu.Unlock()
	if lt == nil {
		return ""
	}
	return lt.hashes.of(lt).defs[name]
}

// lazyHashes are a registration's definition hashes, computed once.
type lazyHashes struct {
	once sync.Once
	defs map[string]string // by the server's tool name
}

// of returns the hashes of lt's tools, computing them at the first call.
func (h *lazyHashes) of(lt *liveTools) *lazyHashes {
	h.once.Do(func() {
		h.defs = make(map[string]string, len(lt.tools))
		for _, t := range lt.tools {
			if d, err := manifest.DefOf(t); err == nil {
				h.defs[t.Name] = d.Hash()
			}
		}
	})
	return h
}

// auditFile records that a file the workspace watches changed, as its
// watcher reported it: the config, a rule file, the record of accepted
// rules or the managed settings. Who changed it is not known: what
// FreeCode writes itself is recorded by what wrote it too (an approval,
// trust, an "always allow" answer in its call's line).
func (w *Workspace) auditFile(path string) {
	kind := audit.KindRules
	if path == w.files.config || path == w.files.managed || path == w.files.managedDrop {
		kind = audit.KindConfig
	}
	w.trail.record(audit.Event{Kind: kind, File: path, Detail: "changed"})
}
