package workspace

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/orchestrator"
)

// onRegistryChange is the registry's report of a change of the tool set,
// on the goroutine that made it (a Conn's): the cache entries go at once,
// so the next Definitions sees the new tools, the subscribers that list
// every tool are told, and the rebuild that decides whether the provider
// definitions changed is left to defsLoop.
func (w *Workspace) onRegistryChange(ev orchestrator.ToolsChanged) {
	w.checkAutoDefer()
	w.definitionsChanged(ev)
	// After the cache entries went: a subscriber that reads the
	// definitions on this event gets them rebuilt.
	w.events.publish(&ToolSetEvent{Server: ev.Server, Reason: ev.Reason})
}

// definitionsChanged drops the definitions and the search index, and has
// defsLoop rebuild the definitions and say whether they changed.
func (w *Workspace) definitionsChanged(ev orchestrator.ToolsChanged) {
	w.search.Invalidate()
	w.defsMu.Lock()
	w.defsPending = append(w.defsPending, ev)
	w.defsMu.Unlock()
	w.defs.Invalidate()
	select {
	case w.defsKick <- struct{}{}:
	default: // a rebuild is due already; it will take this change too
	}
	w.wake()
}

// defsLoop rebuilds the definitions after registry changes, once for all
// the changes that came since the last rebuild (fifty servers connecting
// together cost a few rebuilds, not fifty times every subscriber), and
// publishes a *ToolsChangedEvent only when a hash changed.
func (w *Workspace) defsLoop() {
	for {
		select {
		case <-w.done:
			return
		case <-w.defsKick:
		}
		w.defsMu.Lock()
		changes := w.defsPending
		w.defsPending = nil
		w.defsMu.Unlock()
		// The builds are CPU work only, so Close waits for one to end.
		// Refresh builds the formats one after the other: build them side
		// by side first, on as many cores as there are.
		var g errgroup.Group
		for _, f := range defscache.Formats() {
			g.Go(func() error {
				_, err := w.defs.Get(context.Background(), f)
				return err
			})
		}
		_ = g.Wait() // Refresh reports an error again
		changed, hashes, err := w.defs.Refresh(context.Background())
		if err != nil {
			w.logger.Error("building tool definitions", "error", err)
			continue
		}
		if !changed {
			continue
		}
		// Changes that came during the rebuild may be in it too (and the
		// next rebuild then finds nothing new to report): name them here as
		// well, so that a change in the hashes is never left unnamed.
		w.defsMu.Lock()
		changes = append(changes, w.defsPending...)
		w.defsMu.Unlock()
		ev := &ToolsChangedEvent{Hashes: hashes}
		for i, c := range changes {
			if i == 0 {
				ev.Server, ev.Reason = c.Server, c.Reason
				continue
			}
			if c.Server != ev.Server {
				ev.Server = ""
			}
			if c.Reason != ev.Reason {
				ev.Reason = ReasonSeveral
			}
		}
		w.events.publish(ev)
	}
}

// defsSource builds definitions from the registry and keeps, per format,
// the conversion problems of the last build, for Definitions.
func (w *Workspace) defsSource() defscache.Source {
	return func(ctx context.Context, f defscache.Format) ([]defscache.Def, error) {
		var problems []orchestrator.DefsProblem
		src := orchestrator.DefsSource(w.reg, &orchestrator.DefsOptions{
			Converter: w.conv,
			Deferred:  w.deferred,
			Logger:    w.logger,
			OnProblem: func(p orchestrator.DefsProblem) { problems = append(problems, p) },
		})
		defs, err := src(ctx, f)
		if err == nil {
			w.defsMu.Lock()
			w.defsProblems[f] = problems
			w.defsMu.Unlock()
		}
		return defs, err
	}
}
