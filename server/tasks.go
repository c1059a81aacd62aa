package server

import (
	"context"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/server/wire"
	"github.com/freecode/freecode/workspace"
)

// A task is the frontend's whose call started it, told apart by the
// session's Asker (workspace/tasks.go): every frontend hears of every
// task, each as it may see it (wire.TaskInfo), and only its owner may
// cancel it. freecode/tasks/adopt makes a task the caller's.

// tasks is freecode/tasks: the tasks of calls the sidecar follows, and the
// latest that ended, as this frontend may see them.
func (sess *session) tasks(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	infos := w.Tasks()
	me := sess.asker()
	out := &protocol.TasksResult{Tasks: make([]protocol.TaskInfo, 0, len(infos))}
	for _, t := range infos {
		ti, err := wire.TaskInfo(t, me)
		if err != nil {
			return nil, err
		}
		out.Tasks = append(out.Tasks, ti)
	}
	return out, nil
}

// cancelTask is freecode/tasks/cancel: tasks/cancel to the task's server,
// for its owner only. It answers with the task as it is then; its end
// comes as freecode/tasks/changed.
func (sess *session) cancelTask(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	return taskCall[protocol.TaskCancelParams](sess, params, func(w *workspace.Workspace, server, id string, me orchestrator.Asker) (workspace.TaskInfo, error) {
		t, err := w.CancelTask(ctx, server, id, me)
		if nyt, ok := errors.AsType[*workspace.NotYourTaskError](err); ok {
			return t, jsonrpc2.NewError(protocol.CodeNotYourTask, sess.srv.notYours(nyt))
		}
		return t, err
	})
}

// adoptTask is freecode/tasks/adopt: the task becomes this frontend's,
// live or ended; its former owner hears, in freecode/tasks/changed, that
// it is no longer its own. It answers with the task as its owner sees it.
func (sess *session) adoptTask(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	return taskCall[protocol.TaskAdoptParams](sess, params, func(w *workspace.Workspace, server, id string, me orchestrator.Asker) (workspace.TaskInfo, error) {
		t, err := w.AdoptTask(server, id, me)
		if err == nil {
			sess.logger.Info("adopted a task", "server", server, "task", id)
		}
		return t, err
	})
}

// taskCall decodes the params of a request that names one task, runs do on
// it for this frontend, and answers with the task as this frontend sees it.
func taskCall[P protocol.TaskCancelParams | protocol.TaskAdoptParams](sess *session, params jsonrpc2.RawMessage,
	do func(w *workspace.Workspace, server, id string, me orchestrator.Asker) (workspace.TaskInfo, error)) (any, error) {
	var p P
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	named := protocol.TaskCancelParams(p)
	if err := requireTask(named.Server, named.TaskID); err != nil {
		return nil, err
	}
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	me := sess.asker()
	t, err := do(w, named.Server, named.TaskID, me)
	if err != nil {
		return nil, err
	}
	ti, err := wire.TaskInfo(t, me)
	if err != nil {
		return nil, err
	}
	return &ti, nil
}

// requireTask checks the fields that name a task.
func requireTask(server, taskID string) error {
	switch {
	case server == "":
		return required("server")
	case taskID == "":
		return required("taskId")
	}
	return nil
}

// leaveTasks leaves the tasks of a frontend whose connection ended to
// nobody: another frontend (the same editor, restarted) adopts them.
func (sess *session) leaveTasks() {
	a := sess.asker()
	if a == nil {
		return // it never initialized, and started nothing
	}
	if w, err := sess.srv.workspace(); err == nil {
		w.DisownTasks(a)
	}
}

// notYours says whose a task is that a frontend may not act on, and how
// it makes it its own.
func (s *Server) notYours(e *workspace.NotYourTaskError) string {
	whose := "no frontend's (the sidecar followed it on after a restart, or the frontend that started it is gone)"
	if e.Owner != nil {
		whose = "another frontend's"
		if o := s.sessionOf(e.Owner); o != nil {
			whose = fmt.Sprintf("the task of another frontend, %s", o.describe())
		}
	}
	return fmt.Sprintf("task %s on %q is %s: only its frontend sees its result and may cancel it; freecode/tasks/adopt makes it yours", e.TaskID, e.Server, whose)
}

// sessionOf returns the frontend connected now whose Asker is a.
func (s *Server) sessionOf(a orchestrator.Asker) *session {
	for _, sess := range s.sessionsNow() {
		if sess.asker() == a {
			return sess
		}
	}
	return nil
}

// describe names the frontend for the user: its clientInfo.name and its
// number in the sidecar's log.
func (sess *session) describe() string {
	sess.mu.Lock()
	client := sess.client
	sess.mu.Unlock()
	if client == "" {
		client = "a frontend without a name"
	}
	return fmt.Sprintf("%s (frontend %d)", client, sess.id)
}

// frontendName names the frontend in the audit trail: its clientInfo.name
// and its number in the sidecar's log, "vscode#3".
func (sess *session) frontendName() string {
	sess.mu.Lock()
	client := sess.client
	sess.mu.Unlock()
	if client == "" {
		client = "frontend"
	}
	return fmt.Sprintf("%s#%d", client, sess.id)
}
