package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
)

// notes keeps the sidecar's notifications for the script to await: the
// Client delivers them on a goroutine of its own, in order.
type notes struct {
	// mu guards the fields below.
	mu      sync.Mutex
	all     []frontend.Notification
	changed chan struct{} // closed and replaced by every notification
}

func newNotes() *notes { return &notes{changed: make(chan struct{})} }

// add is the Client's notification callback.
func (n *notes) add(note frontend.Notification) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.all = append(n.all, note)
	close(n.changed)
	n.changed = make(chan struct{})
}

// mark returns the position of the next notification, for await.
func (n *notes) mark() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.all)
}

// await returns the first notification from position from on for which
// match is true, waiting for it at most waitGuard.
func (n *notes) await(ctx context.Context, from int, what string, match func(frontend.Notification) bool) (frontend.Notification, error) {
	timer := time.NewTimer(waitGuard)
	defer timer.Stop()
	for {
		n.mu.Lock()
		for _, note := range n.all[from:] {
			if match(note) {
				n.mu.Unlock()
				return note, nil
			}
		}
		from = len(n.all)
		ch := n.changed
		n.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return frontend.Notification{}, ctx.Err()
		case <-timer.C:
			return frontend.Notification{}, fmt.Errorf("the sidecar sent no %s within %v", what, waitGuard)
		}
	}
}

// awaitStatus waits for a freecode/servers/status of server, from
// position from on, saying it is connected; a failure of the server is an
// error.
func (n *notes) awaitStatus(ctx context.Context, from int, server string) (protocol.ServerStatus, error) {
	var st protocol.ServerStatus
	_, err := n.await(ctx, from, "status of "+server, func(note frontend.Notification) bool {
		if note.Method != protocol.NotifyServersStatus || json.Unmarshal(note.Params, &st) != nil || st.Name != server {
			return false
		}
		return st.State == protocol.StateConnected || st.State == protocol.StateFailed
	})
	if err == nil && st.State == protocol.StateFailed {
		err = fmt.Errorf("server %s failed: %s", server, st.LastError)
	}
	return st, err
}

// awaitToolsChanged waits for the freecode/tools/changed, from position
// from on, that names hash as the anthropic array's.
func (n *notes) awaitToolsChanged(ctx context.Context, from int, hash string) (protocol.ToolsChanged, error) {
	var tc protocol.ToolsChanged
	_, err := n.await(ctx, from, "tools/changed", func(note frontend.Notification) bool {
		return note.Method == protocol.NotifyToolsChanged && json.Unmarshal(note.Params, &tc) == nil && tc.Hashes.Anthropic == hash
	})
	return tc, err
}
