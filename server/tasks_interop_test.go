package server_test

import (
	"strings"
	"testing"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

// server-everything's simulate-research-query, a tool that requires the
// 2025-11-25 revision's tasks, through the sidecar: its call answers
// "running as task <id>" at once, the task is followed to its end, its
// question (an ambiguous query's) reaches the frontend that made the call,
// and the result comes with its end in freecode/tasks/changed.
func TestInteropEverythingLegacyTaskThroughTheSidecar(t *testing.T) {
	files := everythingConfig(t)
	var a asked
	editor := servertest.EditorOptions{Elicit: a.elicit(protocol.ElicitAccept, map[string]any{"interpretation": "historical"})}
	servertest.Run(t, files, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("everything", protocol.StateConnected)
		ed.SetAnswer(servertest.Reply(protocol.AllowOnce))
		before, _ := a.got()
		r := execute(t, ed, call("rq", "mcp__everything__simulate-research-query", `{"topic":"tides","ambiguous":true}`))
		if r.Task == nil || r.IsError || r.Text() != "running as task "+r.Task.TaskID || r.Task.Tool != "simulate-research-query" {
			t.Fatalf("the call: %+v (task %+v)", r, r.Task)
		}
		done := ed.AwaitTask(r.Task.TaskID, protocol.TaskCompleted)
		if done.Result == nil || done.Result.IsError || !strings.Contains(textOf(done.Result.Content), "**Clarification**: historical") {
			t.Errorf("the task's end: %+v", done)
		}
		got, _ := a.got()
		if got = got[len(before):]; len(got) != 1 || got[0].Server != "everything" || got[0].CallID != "rq" || !strings.Contains(got[0].Message, `"tides"`) {
			t.Errorf("the question the frontend got: %+v", got)
		}
	}, servertest.WithEditor(editor))
}
