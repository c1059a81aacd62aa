package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The bounds of the poll interval: a server's pollIntervalMs is kept
// within them, and DefaultPoll is used when it names none.
const (
	MinPoll     = 50 * time.Millisecond
	MaxPoll     = 30 * time.Second
	DefaultPoll = time.Second
)

// maxPollFailures is how many tasks/get in a row may fail (the server
// unreachable, the session reconnecting) before Follow gives up.
const maxPollFailures = 5

// A Server is who Follow asks about a task: a session's [Get] and
// [Update], or a Conn's that outlive its sessions.
type Server interface {
	Get(ctx context.Context, id string) (*Task, error)
	Update(ctx context.Context, id string, responses mcpsdk.InputResponseMap) error
}

// An Answerer answers the questions of an input_required task, by key.
// It may answer some of them; those left out are asked again.
type Answerer func(ctx context.Context, requests map[string]json.RawMessage) (mcpsdk.InputResponseMap, error)

// FollowOptions are what Follow does besides polling.
type FollowOptions struct {
	// OnChange gets the task each time its status or status message
	// changes, the last time with its final state.
	OnChange func(*Task)
	// Answer answers an input_required task's questions; nil leaves them
	// unanswered, and the task waits on the server until its ttl.
	Answer Answerer
}

// ErrGone, wrapped by a Server's error, ends Follow at once: the task's
// server is gone (no longer configured), and no later poll can reach it.
var ErrGone = errors.New("the task's server is gone")

// ErrExpired is the end of a task the server no longer knows (its ttlMs
// passed, or it never had it) or that outlived its ttlMs.
var ErrExpired = errors.New("the server no longer has the task")

// Follow polls the task t (the server's first answer) until it ends, and
// returns its final state. It polls at the server's latest pollIntervalMs
// (within MinPoll and MaxPoll), and not past the task's ttlMs: a task the
// server forgets, or that is still live when its ttlMs is over, is an
// error wrapping ErrExpired. An error also ends it when ctx ends (the task
// goes on on the server: cancelling it is [Cancel]'s), when the server is
// gone (ErrGone), or when tasks/get fails maxPollFailures times in a row.
func Follow(ctx context.Context, srv Server, t *Task, opts FollowOptions) (*Task, error) {
	if err := check(t); err != nil {
		return nil, err
	}
	var deadline time.Time
	if t.TTLMs != nil && *t.TTLMs > 0 {
		start := time.Now()
		if at, err := time.Parse(time.RFC3339Nano, t.CreatedAt); err == nil && at.Before(start) {
			start = at
		}
		deadline = start.Add(time.Duration(*t.TTLMs) * time.Millisecond)
	}
	last := *t
	if opts.OnChange != nil {
		opts.OnChange(t)
	}
	answered := map[string]bool{} // questions answered, not yet gone from the server's list
	failures := 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	soon := t.Status == InputRequired // its questions are asked at once
	for !t.Status.Terminal() {
		wait := interval(t)
		if soon {
			soon, wait = false, 0
		}
		if !deadline.IsZero() && time.Now().Add(wait).After(deadline) {
			wait = max(0, time.Until(deadline))
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("following task %s: %w", t.TaskID, context.Cause(ctx))
		case <-timer.C:
		}
		next, err := srv.Get(ctx, t.TaskID)
		switch {
		case err == nil:
			failures = 0
		case ctx.Err() != nil:
			return nil, fmt.Errorf("following task %s: %w", t.TaskID, context.Cause(ctx))
		case errors.Is(err, ErrGone):
			return nil, fmt.Errorf("task %s: %w", t.TaskID, err)
		case IsUnknown(err):
			return nil, fmt.Errorf("task %s: %w (%v)", t.TaskID, ErrExpired, err)
		default:
			failures++
			if failures >= maxPollFailures {
				return nil, fmt.Errorf("task %s: tasks/get failed %d times in a row: %w", t.TaskID, failures, err)
			}
			continue
		}
		if !deadline.IsZero() && !next.Status.Terminal() && !time.Now().Before(deadline) {
			return nil, fmt.Errorf("task %s: %w: still %s when its ttlMs (%d) was over", t.TaskID, ErrExpired, next.Status, *t.TTLMs)
		}
		if next.TTLMs == nil {
			next.TTLMs = t.TTLMs
		}
		t = next
		if t.Status != last.Status || t.StatusMessage != last.StatusMessage || t.Status.Terminal() {
			last = *t
			if opts.OnChange != nil {
				opts.OnChange(t)
			}
		}
		if t.Status != InputRequired {
			clear(answered)
			continue
		}
		pending := maps.Clone(t.InputRequests)
		maps.DeleteFunc(pending, func(k string, _ json.RawMessage) bool { return answered[k] })
		if len(pending) == 0 || opts.Answer == nil {
			continue
		}
		responses, err := opts.Answer(ctx, pending)
		if err != nil {
			return nil, fmt.Errorf("task %s: answering its questions: %w", t.TaskID, err)
		}
		if len(responses) == 0 {
			continue
		}
		if err := srv.Update(ctx, t.TaskID, responses); err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("following task %s: %w", t.TaskID, context.Cause(ctx))
			}
			return nil, fmt.Errorf("task %s: tasks/update: %w", t.TaskID, err)
		}
		for k := range responses {
			answered[k] = true
		}
		soon = true // look again at once: the answer moves the task on
	}
	return t, nil
}

// interval is how long to wait before polling t again.
func interval(t *Task) time.Duration {
	if t.PollIntervalMs == nil || *t.PollIntervalMs <= 0 {
		return DefaultPoll
	}
	return min(max(time.Duration(*t.PollIntervalMs)*time.Millisecond, MinPoll), MaxPoll)
}
