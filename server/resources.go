package server

import (
	"context"

	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/wire"
)

// The servers' resources and prompts. The lists are what each Conn holds,
// listed at connect and again on list_changed (freecode/resources/changed
// and freecode/prompts/changed tell the frontends, in notify.go); a read
// or a get goes to the server with the frontend's Asker, since a server
// may ask the user something while it serves one. What the
// server answers passes through as MCP has it.

// resources is freecode/resources: a server's resources, or every
// connected server's.
func (sess *session) resources(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	var p protocol.ResourcesParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	list, err := w.Resources(ctx, p.Server)
	if err != nil {
		return nil, err
	}
	out := &protocol.ResourcesResult{Resources: make([]protocol.ResourceInfo, 0, len(list))}
	for _, r := range list {
		out.Resources = append(out.Resources, wire.ResourceInfo(r))
	}
	return out, nil
}

// readResource is freecode/resources/read.
func (sess *session) readResource(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	var p protocol.ReadResourceParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	switch {
	case p.Server == "":
		return nil, required("server")
	case p.URI == "":
		return nil, required("uri")
	}
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	return w.ReadResource(ctx, p.Server, p.URI, sess.asker())
}

// prompts is freecode/prompts: a server's prompts, or every connected
// server's.
func (sess *session) prompts(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	var p protocol.PromptsParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	list, err := w.Prompts(ctx, p.Server)
	if err != nil {
		return nil, err
	}
	out := &protocol.PromptsResult{Prompts: make([]protocol.PromptInfo, 0, len(list))}
	for _, pr := range list {
		out.Prompts = append(out.Prompts, wire.PromptInfo(pr))
	}
	return out, nil
}

// getPrompt is freecode/prompts/get.
func (sess *session) getPrompt(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	var p protocol.GetPromptParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	switch {
	case p.Server == "":
		return nil, required("server")
	case p.Name == "":
		return nil, required("name")
	}
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	return w.GetPrompt(ctx, p.Server, p.Name, p.Arguments, sess.asker())
}
