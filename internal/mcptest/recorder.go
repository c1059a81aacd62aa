package mcptest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Kind says what an Event reports.
type Kind int

// The kinds of events.
const (
	// StatusEvent is a server's status: its state and last error.
	StatusEvent Kind = iota + 1
	// ToolsEvent is a change of a server's tool list.
	ToolsEvent
)

func (k Kind) String() string {
	switch k {
	case StatusEvent:
		return "status"
	case ToolsEvent:
		return "tools"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// An Event is one thing the code under test reported about a server.
type Event struct {
	Server string
	Kind   Kind
	State  string   // StatusEvent: the state's name, as its String method spells it
	Error  string   // StatusEvent: the last error, if any
	Reason string   // ToolsEvent: why the tools changed
	Tools  []string // ToolsEvent: the tool names, in the order given; nil when the tools are gone
}

func (e Event) String() string {
	switch e.Kind {
	case StatusEvent:
		if e.Error != "" {
			return fmt.Sprintf("%s: status %s (lastError %q)", e.Server, e.State, e.Error)
		}
		return fmt.Sprintf("%s: status %s", e.Server, e.State)
	case ToolsEvent:
		return fmt.Sprintf("%s: tools %s (%d) %s", e.Server, e.Reason, len(e.Tools), strings.Join(e.Tools, ","))
	}
	return fmt.Sprintf("%s: %v", e.Server, e.Kind)
}

// A Recorder keeps, in order, the events the code under test reports. Feed
// it from callbacks: Status from mcp.ConnOptions.OnStatus or
// mcp.ManagerOptions.OnStatus, Tools from ManagerOptions.OnToolsChanged or
// a workspace's event stream. Its methods are safe for concurrent use and
// never block the caller for long, so it can sit in a Conn's goroutine.
type Recorder struct {
	// mu guards the fields below.
	mu      sync.Mutex
	events  []Event
	changed chan struct{} // closed and replaced on every event
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{changed: make(chan struct{})}
}

// Add records e.
func (r *Recorder) Add(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// Status records a status of server. state is the server's state (mcp.State
// or anything whose String names it).
func (r *Recorder) Status(server string, state fmt.Stringer, lastError string) {
	r.Add(Event{Server: server, Kind: StatusEvent, State: state.String(), Error: lastError})
}

// Tools records a change of server's tools; tools is nil when they are gone.
func (r *Recorder) Tools(server, reason string, tools []*mcpsdk.Tool) {
	var names []string
	if tools != nil {
		names = make([]string, 0, len(tools))
		for _, t := range tools {
			names = append(names, t.Name)
		}
	}
	r.Add(Event{Server: server, Kind: ToolsEvent, Reason: reason, Tools: names})
}

// Events returns a copy of every event so far.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// States returns the states server went through, a state repeated by
// consecutive status events listed once.
func (r *Recorder) States(server string) []string {
	var out []string
	for _, e := range r.Events() {
		if e.Server == server && e.Kind == StatusEvent && (len(out) == 0 || out[len(out)-1] != e.State) {
			out = append(out, e.State)
		}
	}
	return out
}

// ToolChanges returns server's tool events as "reason:name,name", tool
// names sorted.
func (r *Recorder) ToolChanges(server string) []string {
	var out []string
	for _, e := range r.Events() {
		if e.Server == server && e.Kind == ToolsEvent {
			names := slices.Sorted(slices.Values(e.Tools))
			out = append(out, e.Reason+":"+strings.Join(names, ","))
		}
	}
	return out
}

// A Verdict is what an Expectation makes of the events so far.
type Verdict int

// The verdicts.
const (
	// Unmet: not yet; later events may meet it.
	Unmet Verdict = iota
	// Met: the events so far meet it.
	Met
	// Unmeetable: no later event can meet it; Await fails at once.
	Unmeetable
)

// An Expectation is a condition on the events recorded so far, checked
// again on every new event.
type Expectation struct {
	Check       func(events []Event) Verdict
	Description string
}

// Expect returns an Expectation from a description and a check.
func Expect(description string, check func([]Event) Verdict) Expectation {
	return Expectation{Check: check, Description: description}
}

func verdict(ok bool) Verdict {
	if ok {
		return Met
	}
	return Unmet
}

// ReachedState is met once server has reported state, at any time.
func ReachedState(server string, state fmt.Stringer) Expectation {
	return ReachedStateTimes(server, state, 1)
}

// ReachedStateTimes is met once server has entered state n times (a state
// repeated by consecutive events counts once).
func ReachedStateTimes(server string, state fmt.Stringer, n int) Expectation {
	want := state.String()
	return Expect(fmt.Sprintf("%s reached state %s %d time(s)", server, want, n), func(events []Event) Verdict {
		count, prev := 0, ""
		for _, e := range events {
			if e.Server != server || e.Kind != StatusEvent {
				continue
			}
			if e.State == want && prev != want {
				count++
			}
			prev = e.State
		}
		return verdict(count >= n)
	})
}

// InState is met while server's latest status is state.
func InState(server string, state fmt.Stringer) Expectation {
	want := state.String()
	return Expect(fmt.Sprintf("%s is in state %s", server, want), func(events []Event) Verdict {
		for i := len(events) - 1; i >= 0; i-- {
			if e := events[i]; e.Server == server && e.Kind == StatusEvent {
				return verdict(e.State == want)
			}
		}
		return Unmet
	})
}

// StatusWith is met once server has reported state with a last error that
// contains errPart.
func StatusWith(server string, state fmt.Stringer, errPart string) Expectation {
	want := state.String()
	return Expect(fmt.Sprintf("%s reported state %s with an error containing %q", server, want, errPart), func(events []Event) Verdict {
		for _, e := range events {
			if e.Server == server && e.Kind == StatusEvent && e.State == want && strings.Contains(e.Error, errPart) {
				return Met
			}
		}
		return Unmet
	})
}

// ToolsChanged is met once server has reported a tool list of n tools
// (n = 0 matches tools that are gone too).
func ToolsChanged(server string, n int) Expectation {
	return ToolsChangedFor(server, "", n)
}

// ToolsChangedFor is ToolsChanged for events of one reason ("" is any).
func ToolsChangedFor(server, reason string, n int) Expectation {
	desc := fmt.Sprintf("%s's tools changed to %d tool(s)", server, n)
	if reason != "" {
		desc += " for reason " + reason
	}
	return Expect(desc, func(events []Event) Verdict {
		for _, e := range events {
			if e.Server == server && e.Kind == ToolsEvent && len(e.Tools) == n && (reason == "" || e.Reason == reason) {
				return Met
			}
		}
		return Unmet
	})
}

// EventCount is met once server has n events of kind.
func EventCount(server string, kind Kind, n int) Expectation {
	return Expect(fmt.Sprintf("%s has %d %v event(s)", server, n, kind), func(events []Event) Verdict {
		count := 0
		for _, e := range events {
			if e.Server == server && e.Kind == kind {
				count++
			}
		}
		return verdict(count >= n)
	})
}

// Await waits, within ctx, until every expectation is met. It fails at once
// if one is unmeetable. Its error lists what was not met and every event
// seen, so a failing test says what happened instead.
func (r *Recorder) Await(ctx context.Context, exps ...Expectation) error {
	for {
		r.mu.Lock()
		events, changed := r.events, r.changed
		r.mu.Unlock()
		var unmet []string
		for _, e := range exps {
			switch e.Check(events) {
			case Met:
			case Unmeetable:
				return r.failure("unmeetable: "+e.Description, events, nil)
			default:
				unmet = append(unmet, e.Description)
			}
		}
		if len(unmet) == 0 {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return r.failure("unmet: "+strings.Join(unmet, "; "), events, ctx.Err())
		}
	}
}

// MustAwait is Await within t's context, failing t with Await's error.
func (r *Recorder) MustAwait(t testing.TB, exps ...Expectation) {
	t.Helper()
	if err := r.Await(t.Context(), exps...); err != nil {
		t.Fatal(err)
	}
}

func (r *Recorder) failure(what string, events []Event, cause error) error {
	var b strings.Builder
	b.WriteString(what)
	if cause != nil {
		fmt.Fprintf(&b, " (%v)", cause)
	}
	fmt.Fprintf(&b, "\nevents seen (%d):", len(events))
	for _, e := range events {
		b.WriteString("\n\t")
		b.WriteString(e.String())
	}
	return fmt.Errorf("%s", b.String())
}
