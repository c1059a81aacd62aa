package workspace

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/internal/providerschema"
	"github.com/freecode/freecode/orchestrator"
)

// defsBuilder keeps the provider definitions in step with the registry: a
// change drops the cache's entries at once, so the next Definitions sees
// the new tools, and its goroutine rebuilds them, once for all the changes
// that came since its last rebuild (fifty servers connecting together
// cost a few rebuilds, not fifty times every subscriber), and publishes a
// *ToolsChangedEvent only when a hash changed.
type defsBuilder struct {
	reg      *orchestrator.Registry
	deferred func(*orchestrator.Tool) bool // the workspace's deferral
	publish  func(...Event)
	logger   *slog.Logger
	cache    *defscache.Cache
	// conv converts input schemas for providers and memoizes them across
	// builds: a change of one server's tools reconverts only those.
	conv *providerschema.Converter

	kick chan struct{} // a rebuild is due; buffered 1
	done chan struct{} // closed by Close
	wg   sync.WaitGroup

	// mu guards the fields below.
	mu       sync.Mutex
	pending  []orchestrator.ToolsChanged // registry changes not yet rebuilt
	problems map[defscache.Format][]orchestrator.DefsProblem
}

// newDefsBuilder returns the builder of reg's definitions, built once:
// the hashes of what reg holds now (the built-ins) are what the first
// change is compared against. Start starts its goroutine.
func newDefsBuilder(ctx context.Context, reg *orchestrator.Registry, deferred func(*orchestrator.Tool) bool, publish func(...Event), logger *slog.Logger) (*defsBuilder, error) {
	b := &defsBuilder{
		reg:      reg,
		deferred: deferred,
		publish:  publish,
		logger:   logger,
		conv:     providerschema.New(nil),
		kick:     make(chan struct{}, 1),
		done:     make(chan struct{}),
		problems: make(map[defscache.Format][]orchestrator.DefsProblem),
	}
	b.cache = defscache.New(b.source(), nil)
	if _, _, err := b.cache.Refresh(ctx); err != nil {
		return nil, err
	}
	return b, nil
}

// start starts the goroutine that rebuilds the definitions.
func (b *defsBuilder) start() { b.wg.Go(b.loop) }

// Close stops the rebuilds and waits for the one in progress: they are
// CPU work only.
func (b *defsBuilder) Close() {
	close(b.done)
	b.wg.Wait()
}

// changed records a change of the tool set: the definitions go at once,
// and the goroutine rebuilds them.
func (b *defsBuilder) changed(ev orchestrator.ToolsChanged) {
	b.mu.Lock()
	b.pending = append(b.pending, ev)
	b.mu.Unlock()
	b.cache.Invalidate()
	select {
	case b.kick <- struct{}{}:
	default: // a rebuild is due already; it will take this change too
	}
}

// definitions returns the tools array of format f, and the conversion
// problems of the build that made it.
func (b *defsBuilder) definitions(ctx context.Context, f defscache.Format) (*defscache.Entry, []orchestrator.DefsProblem, error) {
	e, err := b.cache.Get(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	b.mu.Lock()
	problems := slices.Clone(b.problems[f])
	b.mu.Unlock()
	return e, problems, nil
}

// loop rebuilds the definitions after registry changes and publishes a
// *ToolsChangedEvent when a hash changed.
func (b *defsBuilder) loop() {
	for {
		select {
		case <-b.done:
			return
		case <-b.kick:
		}
		b.mu.Lock()
		changes := b.pending
		b.pending = nil
		b.mu.Unlock()
		// Refresh builds the formats one after the other: build them side
		// by side first, on as many cores as there are.
		var g errgroup.Group
		for _, f := range defscache.Formats() {
			g.Go(func() error {
				_, err := b.cache.Get(context.Background(), f)
				return err
			})
		}
		_ = g.Wait() // Refresh reports an error again
		changed, hashes, err := b.cache.Refresh(context.Background())
		if err != nil {
			b.logger.Error("building tool definitions", "error", err)
			continue
		}
		if !changed {
			continue
		}
		// Changes that came during the rebuild may be in it too (and the
		// next rebuild then finds nothing new to report): name them here as
		// well, so that a change in the hashes is never left unnamed.
		b.mu.Lock()
		changes = append(changes, b.pending...)
		b.mu.Unlock()
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
		b.publish(ev)
	}
}

// source builds definitions from the registry and keeps, per format, the
// conversion problems of the last build.
func (b *defsBuilder) source() defscache.Source {
	return func(ctx context.Context, f defscache.Format) ([]defscache.Def, error) {
		var problems []orchestrator.DefsProblem
		src := orchestrator.DefsSource(b.reg, &orchestrator.DefsOptions{
			Converter: b.conv,
			Deferred:  b.deferred,
			Logger:    b.logger,
			OnProblem: func(p orchestrator.DefsProblem) { problems = append(problems, p) },
		})
		defs, err := src(ctx, f)
		if err == nil {
			b.mu.Lock()
			b.problems[f] = problems
			b.mu.Unlock()
		}
		return defs, err
	}
}

// onRegistryChange is the registry's report of a change of the tool set,
// on the goroutine that made it (a Conn's): the definitions go at once,
// the subscribers that list every tool are told, and the rebuild that
// decides whether the provider definitions changed is the builder's.
func (w *Workspace) onRegistryChange(ev orchestrator.ToolsChanged) {
	w.checkAutoDefer()
	w.definitionsChanged(ev)
	// After the cache entries went: a subscriber that reads the
	// definitions on this event gets them rebuilt.
	w.events.publish(&ToolSetEvent{Server: ev.Server, Reason: ev.Reason})
}

// definitionsChanged drops the definitions and the search index, and has
// the builder rebuild the definitions and say whether they changed.
func (w *Workspace) definitionsChanged(ev orchestrator.ToolsChanged) {
	w.search.Invalidate()
	w.defs.changed(ev)
	w.settled.wake()
}
