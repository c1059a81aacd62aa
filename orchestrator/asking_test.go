package orchestrator

import (
	"context"
	"errors"
	"testing"
)

func TestAskTurnsOneQuestionPerTool(t *testing.T) {
	var q askTurns
	ctx := context.Background()
	a, b := &turnApprover{}, &turnApprover{}
	done, err := q.take(ctx, a, "mcp__sysmon__poll")
	if err != nil {
		t.Fatal(err)
	}
	// Another tool's question is not held up.
	other, err := q.take(ctx, a, "mcp__vanilla__get-time")
	if err != nil {
		t.Fatal(err)
	}
	other()
	// Nor is another frontend's question about the same tool.
	elsewhere, err := q.take(ctx, b, "mcp__sysmon__poll")
	if err != nil {
		t.Fatal(err)
	}
	elsewhere()

	// A second question about the same tool waits for the first's answer.
	got := make(chan func(), 1)
	go func() {
		d, err := q.take(ctx, a, "mcp__sysmon__poll")
		if err != nil {
			t.Error(err)
		}
		got <- d
	}()
	waiting := func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		_, open := q.open[askKey{a, "mcp__sysmon__poll"}]
		return open
	}
	select {
	case <-got:
		t.Fatal("a second question opened while the first was open")
	default:
	}
	if !waiting() {
		t.Fatal("the first question is not open")
	}
	done()
	second := <-got
	if !waiting() {
		t.Fatal("the second question is not open once it took its turn")
	}
	second()
	if waiting() {
		t.Fatal("a question is left open")
	}

	// A call cancelled while it waits says so and opens nothing.
	done, _ = q.take(ctx, a, "mcp__sysmon__poll")
	cctx, cancel := context.WithCancelCause(ctx)
	cause := errors.New("the batch was cancelled")
	cancel(cause)
	if _, err := q.take(cctx, a, "mcp__sysmon__poll"); !errors.Is(err, cause) {
		t.Errorf("take on a cancelled ctx = %v, want %v", err, cause)
	}
	done()
}

type turnApprover struct{ n int }

func (*turnApprover) Approve(context.Context, Request) (Answer, error) { return Answer{}, nil }
