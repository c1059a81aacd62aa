package workspace

import (
	"context"
	"slices"

	"github.com/freecode/freecode/config"
)

// The manifests of the running servers are watched like the config files:
// a review made in another process (`freecode mcp review`, another
// sidecar on the same config) is in force here, in the registration and
// in the tools' marks a frontend shows, as soon as the file changes, not
// only at the next call of the tool.

// manifestWatch follows the manifest files of the running servers.
type manifestWatch struct {
	paths   []string // sorted
	watcher *config.Watcher
}

// watchManifests makes the watched manifests those of running (pinning
// on).
func (p *pinner) watchManifests(running []config.Server) {
	var paths []string
	for _, s := range running {
		if !s.PinningOff {
			paths = append(paths, p.store.Path(p.entryKey(s)))
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	p.watchMu.Lock()
	defer p.watchMu.Unlock()
	if p.closed || slices.Equal(paths, p.watch.paths) {
		return
	}
	p.closeWatchLocked()
	p.watch.paths = paths
	if len(paths) == 0 {
		return
	}
	opts := p.watchOpts
	opts.OnChange = p.onManifests
	wt, err := config.Watch(context.Background(), paths, &opts)
	if err != nil {
		p.logger.Warn("watching the servers' manifests", "error", err)
		return
	}
	p.watch.watcher = wt
}

// closeWatchLocked stops the watcher, which waits for a report in
// progress. The caller holds watchMu, and not mu.
func (p *pinner) closeWatchLocked() {
	if p.watch.watcher != nil {
		p.watch.watcher.Close()
	}
	p.watch = manifestWatch{}
}

// onManifests is the watcher's report: the servers whose manifest changed
// are judged again against it, and registered anew if their reviews
// changed.
func (p *pinner) onManifests(changes []config.Change) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range changes {
		for server, lt := range p.live {
			if !lt.entry.PinningOff && p.store.Path(p.entryKey(lt.entry)) == c.Path {
				p.recheckLocked(server, lt)
			}
		}
	}
}
