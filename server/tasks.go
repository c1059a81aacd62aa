package server

import (
	"context"

	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/wire"
)

// tasks is freecode/tasks: the tasks of calls the sidecar follows, and the
// latest that ended.
func (sess *session) tasks(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	infos := w.Tasks()
	out := &protocol.TasksResult{Tasks: make([]protocol.TaskInfo, 0, len(infos))}
	for _, t := range infos {
		ti, err := wire.TaskInfo(t)
		if err != nil {
			return nil, err
		}
		out.Tasks = append(out.Tasks, ti)
	}
	return out, nil
}

// cancelTask is freecode/tasks/cancel: tasks/cancel to the task's server.
// It answers with the task as it is then; its end comes as
// freecode/tasks/changed.
func (sess *session) cancelTask(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	var p protocol.TaskCancelParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	switch {
	case p.Server == "":
		return nil, required("server")
	case p.TaskID == "":
		return nil, required("taskId")
	}
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	t, err := w.CancelTask(ctx, p.Server, p.TaskID)
	if err != nil {
		return nil, err
	}
	ti, err := wire.TaskInfo(t)
	if err != nil {
		return nil, err
	}
	return &ti, nil
}
