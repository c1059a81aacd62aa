package orchestrator

import (
	"context"
	"sync"
)

// askTurns lets one permission question per tool be open at a time. A call
// of a tool whose question is open waits for that answer and then applies
// the rules again, since the answer may have settled it: "always allow"
// adds a session allow at once. Without the wait, an MCP Apps view that
// polls an unannotated tool stacks one prompt per poll while the first is
// open, and after "always allow" the user is still asked the same question
// for each of them. Each call still gets its own question when the answer
// was for that call alone (allow once, deny).
type askTurns struct {
	mu   sync.Mutex
	open map[string]chan struct{} // tool id → closed when its question is answered
}

// take waits until no question about the tool id is open, then opens one;
// done closes it. It fails only when ctx ends while waiting.
func (q *askTurns) take(ctx context.Context, id string) (done func(), err error) {
	for {
		q.mu.Lock()
		ch, busy := q.open[id]
		if !busy {
			if q.open == nil {
				q.open = make(map[string]chan struct{})
			}
			ch = make(chan struct{})
			q.open[id] = ch
			q.mu.Unlock()
			return func() {
				q.mu.Lock()
				delete(q.open, id)
				q.mu.Unlock()
				close(ch)
			}, nil
		}
		q.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}
