package workspace

import (
	"context"
	"slices"

	"github.com/freecode/freecode/config"
)

// The manifests of the running servers are watched like the config files:
// a review made in another process (`freecode mcp review`, another
// sidecar on the same config) is in force here, and in the tools'
// marks a frontend shows, as soon as the file changes, not only at the
// next call of the tool.

// manifestWatch follows the manifest files of the running servers.
type manifestWatch struct {
	paths   []string // sorted
	watcher *config.Watcher
}

// watchManifests makes the watched manifests those of running (pinning
// on). The caller holds reloadMu.
func (w *Workspace) watchManifests(running []config.Server) {
	var paths []string
	for _, s := range running {
		if !s.PinningOff {
			paths = append(paths, w.pins.store.Path(w.entryKey(s)))
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	if slices.Equal(paths, w.mwatch.paths) {
		return
	}
	if w.mwatch.watcher != nil {
		w.mwatch.watcher.Close()
	}
	w.mwatch = manifestWatch{paths: paths}
	if len(paths) == 0 {
		return
	}
	wt, err := config.Watch(context.Background(), paths, &config.WatchOptions{
		OnChange:  w.onManifests,
		Debounce:  w.opts.Debounce,
		ForcePoll: w.opts.ForcePoll,
		Logger:    w.logger,
	})
	if err != nil {
		w.logger.Warn("watching the servers' manifests", "error", err)
		return
	}
	w.mwatch.watcher = wt
}

// closeManifestWatch stops the watcher. The caller holds reloadMu, or the
// workspace is closing.
func (w *Workspace) closeManifestWatch() {
	if w.mwatch.watcher != nil {
		w.mwatch.watcher.Close()
	}
	w.mwatch = manifestWatch{}
}

// onManifests is the watcher's report: the servers whose manifest changed
// are judged again against it.
func (w *Workspace) onManifests(changes []config.Change) {
	p := w.pins
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range changes {
		for server, lt := range p.live {
			if !lt.entry.PinningOff && p.store.Path(w.entryKey(lt.entry)) == c.Path {
				w.recheckLocked(server, lt)
			}
		}
	}
}
