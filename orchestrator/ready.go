package orchestrator

import (
	"context"
	"fmt"
	"sync"
)

// A server started on demand is registered from its manifest, and only
// lists its tools as it starts; a server that reconnects lists them again.
// What it lists may differ from what was registered: a description that
// changed since the user accepted it must be asked about. So the
// orchestrator makes a call's server ready (Runner.Ready) before it
// decides on the call (Execute), and checks once more, just before the
// call goes out, that the tool is still registered as it was decided on
// (run). A built-in has no server to make ready.

// ready makes the servers of a batch's calls ready, in parallel, each
// within its call's own hard limit, and prepares again the calls whose
// tools were registered anew meanwhile, so that what the gate decides on is
// what the servers list now. A call that a deny rule forbids starts no
// server; a server that fails to come up leaves its calls as they were, for
// the call itself to fail. It returns what releases the servers.
func (o *Orchestrator) ready(ctx context.Context, preps []prepared, results []ToolResult) (release func()) {
	type pending struct {
		r     Runner
		limit context.Context
		stop  context.CancelFunc
	}
	servers := make(map[string]*pending)
	for i := range preps {
		p := &preps[i]
		if p.done || p.tool.Server == "" {
			continue
		}
		if servers[p.tool.Server] != nil || o.Denied(p.tool) {
			continue
		}
		limit, stop := context.WithTimeout(ctx, progressExtensions*o.timeoutOf(p.tool))
		servers[p.tool.Server] = &pending{r: p.tool.Runner, limit: limit, stop: stop}
	}
	if len(servers) == 0 {
		return func() {}
	}
	var (
		mu       sync.Mutex
		releases []func()
		wg       sync.WaitGroup
	)
	readyOne := func(name string, s *pending) {
		defer s.stop()
		rel, err := s.r.Ready(s.limit)
		if err != nil {
			o.log.Debug("server not ready before its calls were decided", "server", name, "error", err)
			return
		}
		mu.Lock()
		releases = append(releases, rel)
		mu.Unlock()
	}
	if len(servers) == 1 {
		// The common batch, one server's calls: nothing to overlap, so no
		// goroutine to start and wait for.
		for name, s := range servers {
			readyOne(name, s)
		}
	} else {
		for name, s := range servers {
			wg.Go(func() { readyOne(name, s) })
		}
		wg.Wait()
	}
	for i := range preps {
		p := &preps[i]
		if p.done || servers[p.tool.Server] == nil {
			continue
		}
		if cur, ok := o.reg.Lookup(p.tool.ID); !ok || cur != p.tool {
			tr := p.tr
			preps[i] = o.prepare(p.call, &results[i])
			preps[i].tr = tr
		}
	}
	return func() {
		for _, rel := range releases {
			rel()
		}
	}
}

// maxRecheck bounds how often one call is decided again because its
// server registered the tool anew between the decision and the call.
const maxRecheck = 2

// recheck makes the server of a call that was decided ready, and checks
// that its tool is still registered as it was decided on. If it is not
// (the server started or reconnected meanwhile and listed another
// definition), the call is prepared and decided again. It returns the call
// to make and its decision, or the result that ends it: invalid or denied
// by its new definition, or not run because the definition moved under a
// call that runs beside others and is no longer read-only. alone says the
// call runs by itself. release ends the hold on the server.
func (o *Orchestrator) recheck(ctx, hardCtx context.Context, p *prepared, d Decision, eo *ExecOptions, alone bool) (*prepared, Decision, *ToolResult, func()) {
	releases := []func(){}
	release := func() {
		for _, rel := range releases {
			rel()
		}
	}
	for n := 0; ; n++ {
		if p.tool.Server == "" {
			return p, d, nil, release
		}
		rel, err := p.tool.Runner.Ready(hardCtx)
		if err != nil {
			return p, d, nil, release // the call's own attempt says why
		}
		releases = append(releases, rel)
		cur, ok := o.reg.Lookup(p.tool.ID)
		if ok && (cur == p.tool || sameTool(cur, p.tool)) {
			return p, d, nil, release
		}
		var res ToolResult
		if n == maxRecheck {
			res = errorResult(p.call.CallID, DecisionDenied, fmt.Sprintf("%s was not run: its server %q kept listing other definitions of it while the call was decided; try again", p.tool.ID, p.tool.Server))
			return p, d, &res, release
		}
		o.log.Info("deciding a call again: its server listed the tool anew", "tool", p.tool.ID, "callId", p.call.CallID)
		next := o.prepare(p.call, &res)
		next.tr = p.tr
		if next.done {
			return p, d, &res, release
		}
		if !alone && !next.tool.ReadOnly {
			res = errorResult(p.call.CallID, DecisionDenied, fmt.Sprintf("%s was not run: its server %q listed it anew, no longer read-only, while it was to run beside other calls; call it again", p.tool.ID, p.tool.Server))
			return p, d, &res, release
		}
		next.gateSpan = next.tr.child(nil, "freecode.permission")
		nd, denial := o.gate(ctx, &next, eo)
		endGate(next.gateSpan, &next, nd)
		if nd == DecisionDenied {
			res = errorResult(p.call.CallID, DecisionDenied, denial)
			return p, d, &res, release
		}
		if d == DecisionAsked {
			// The user was asked, and may have accepted the definition
			// in the answer, which is what registered it anew: the rules
			// allowing it now does not unask them.
			nd = DecisionAsked
		}
		p, d = &next, nd
	}
}
