package orchestrator

import (
	"context"
	"reflect"
	"sync"
)

// askTurns lets one permission question per tool be open at a time, per
// frontend (another frontend's question is not held up by it, nor
// answered by its answer). A call
// of a tool whose question is open waits for that answer and then applies
// the rules again, since the answer may have settled it: "always allow"
// adds a session allow at once. Without the wait, an MCP Apps view that
// polls an unannotated tool stacks one prompt per poll while the first is
// open, and after "always allow" the user is still asked the same question
// for each of them. Each call still gets its own question when the answer
// was for that call alone (allow once, deny).
type askTurns struct {
	mu   sync.Mutex
	open map[askKey]chan struct{} // closed when its question is answered
}

type askKey struct {
	who  any // the frontend: its batches' Asker, else their Approver
	tool string
}

// frontendOf is who asks the user for the batch eo: the Asker a frontend
// brings to every batch it runs, else the batch's Approver.
func frontendOf(eo *ExecOptions) any {
	if eo.Asker != nil {
		return eo.Asker
	}
	return eo.Approver
}

// take waits until no question about the tool id is open for who, then
// opens one; done closes it. It fails only when ctx ends while waiting.
// A who that cannot be a map key is not waited for.
func (q *askTurns) take(ctx context.Context, who any, id string) (done func(), err error) {
	if t := reflect.TypeOf(who); t == nil || !t.Comparable() {
		return func() {}, nil
	}
	key := askKey{who, id}
	for {
		q.mu.Lock()
		ch, busy := q.open[key]
		if !busy {
			if q.open == nil {
				q.open = make(map[askKey]chan struct{})
			}
			ch = make(chan struct{})
			q.open[key] = ch
			q.mu.Unlock()
			return func() {
				q.mu.Lock()
				delete(q.open, key)
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
