package main

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/freecode/freecode/internal/mcptasks"
	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/internal/mcpwire"
)

// serveTasks serves the demo server with --tasks over HTTP, with an
// engine of its own so that the test can see its tasks.
func serveTasks(t *testing.T) (*httptest.Server, *mcptasks.Engine) {
	t.Helper()
	s := newServer("freecode-demo", newMemProject())
	e, err := mcptasks.New(s, mcptasks.Options{PollInterval: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	addTaskTools(e)
	hs := httptest.NewServer(mcptasks.HTTPHandler(s))
	t.Cleanup(func() {
		hs.Close()
		e.Close()
	})
	return hs, e
}

// Without --tasks the demo server has no tasks extension, and no long_build.
func TestNoTasksByDefault(t *testing.T) {
	s := newServer("freecode-demo", newMemProject())
	stop, err := addTasks(s, taskConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	hs := httptest.NewServer(mcptasks.HTTPHandler(s))
	defer hs.Close()
	c := mcptest.NewTasksClient(t, hs.URL, true)
	raw, err := c.Call("server/discover", nil)
	if err != nil || strings.Contains(string(raw), mcpwire.TasksExtension) {
		t.Errorf("server/discover without --tasks: %s, %v", raw, err)
	}
	if raw, err := c.Call("tools/list", nil); err != nil || strings.Contains(string(raw), "long_build") {
		t.Errorf("tools/list without --tasks: %s, %v", raw, err)
	}
}

// long_build runs as a task for a client of the extension: status messages
// a step, a question, the answer in its result; it can be cancelled.
func TestLongBuildTask(t *testing.T) {
	hs, _ := serveTasks(t)
	c := mcptest.NewTasksClient(t, hs.URL, true)

	for _, tc := range []struct {
		action  string
		publish bool
		want    string
	}{
		{"accept", true, "build passed: 3 steps in 0.3s; published"},
		{"accept", false, "build passed: 3 steps in 0.3s; not published (accept)"},
		{"decline", false, "build passed: 3 steps in 0.3s; not published (decline)"},
	} {
		t.Run(tc.action, func(t *testing.T) {
			id := c.Start("long_build", map[string]any{"steps": 3, "seconds": 0.3}).TaskID
			w := c.Await(id, func(w mcptest.WireTask) bool {
				return strings.HasPrefix(w.StatusMessage, "step ") || w.Status != "working"
			})
			if w.Status != "working" {
				t.Fatalf("long_build: %+v, want working with a step", w)
			}
			w = c.Await(id, mcptest.TaskStatus("input_required"))
			if len(w.InputRequests) != 1 {
				t.Fatalf("inputRequests %v", w.InputRequests)
			}
			for key, q := range w.InputRequests {
				if !strings.Contains(string(q), "Publish its artifacts?") {
					t.Errorf("question %s", q)
				}
				if _, err := c.Call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
					key: map[string]any{"action": tc.action, "content": map[string]any{"publish": tc.publish}},
				}}); err != nil {
					t.Fatal(err)
				}
			}
			if w := c.Await(id, mcptest.TaskStatus("completed")); w.Text() != tc.want {
				t.Errorf("result %q, want %q", w.Text(), tc.want)
			}
		})
	}

	t.Run("cancel", func(t *testing.T) {
		id := c.Start("long_build", map[string]any{"steps": 2, "seconds": 600}).TaskID
		if _, err := c.Call("tasks/cancel", map[string]any{"taskId": id}); err != nil {
			t.Fatal(err)
		}
		if w, _ := c.Get(id); w.Status != "cancelled" {
			t.Errorf("after cancel: %+v", w)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		id := c.Start("long_build", map[string]any{"steps": 0}).TaskID
		w := c.Await(id, mcptest.TaskStatus("completed"))
		if !w.Result.IsError || !strings.Contains(w.Text(), "invalid arguments for long_build") {
			t.Errorf("bad input: %+v %q", w, w.Text())
		}
	})
}

// Without the extension long_build runs in the call.
func TestLongBuildWithoutTasks(t *testing.T) {
	hs, e := serveTasks(t)
	c := mcptest.NewTasksClient(t, hs.URL, false)
	raw, err := c.Call("tools/call", map[string]any{"name": "long_build", "arguments": map[string]any{"steps": 1, "seconds": 0, "ask": false}})
	if err != nil || !strings.Contains(string(raw), "build passed: 1 steps in 0s; not published") || strings.Contains(string(raw), "taskId") {
		t.Fatalf("long_build without the extension: %s, %v", raw, err)
	}
	raw, err = c.Call("tools/call", map[string]any{"name": "long_build", "arguments": map[string]any{"steps": 1, "seconds": 0}})
	if err != nil || !strings.Contains(string(raw), "could not ask") {
		t.Fatalf("long_build asking a client that cannot be asked: %s, %v", raw, err)
	}
	if ids := e.IDs(); len(ids) != 0 {
		t.Errorf("tasks made: %v", ids)
	}
}
