package workspace

import (
	"context"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/orchestrator"
)

// What the servers offer beside tools, resources and prompts, and what
// they ask of the client, elicitation and sampling.
//
// Resources and prompts are the servers' own lists, held by each Conn and
// read here; a change of one is a *ResourcesChangedEvent or a
// *PromptsChangedEvent. A server's question (an elicitation form or URL, a
// sampling request) goes to the Asker of the request it came during: the
// ExecOptions.Asker of the batch whose call caused it, or the asker given
// to ReadResource and GetPrompt.

// ResourceInfo is one resource of a server, as its resources/list named it.
type ResourceInfo struct {
	Server      string
	URI         string
	Name        string
	Title       string
	MIMEType    string
	Description string
}

// PromptInfo is one prompt of a server, as its prompts/list named it.
type PromptInfo struct {
	Server      string
	Name        string
	Title       string
	Description string
	Arguments   []*mcpsdk.PromptArgument
}

// ResourcesChangedEvent says that a server's resources changed: read them
// again (Resources). Reason is the mcp.ListChanged's ("connected",
// "listChanged", "reconnected", "failed", "stopped", …).
type ResourcesChangedEvent struct {
	Server string
	Reason string
}

// PromptsChangedEvent says that a server's prompts changed, as
// ResourcesChangedEvent says it of resources.
type PromptsChangedEvent struct {
	Server string
	Reason string
}

func (*ResourcesChangedEvent) event() {}
func (*PromptsChangedEvent) event()   {}

// onListChanged is the Manager's report of a changed list, from a Conn
// goroutine.
func (w *Workspace) onListChanged(ev mcp.ListChanged) {
	switch ev.Kind {
	case mcp.ListResources:
		w.events.publish(&ResourcesChangedEvent{Server: ev.Server, Reason: ev.Reason})
	case mcp.ListPrompts:
		w.events.publish(&PromptsChangedEvent{Server: ev.Server, Reason: ev.Reason})
	}
}

// conn returns the named server's Conn, or why there is none to ask. A
// server on demand that is idle is started, within ctx: asking it is a
// use like a call (its idle timeout runs from here).
func (w *Workspace) conn(ctx context.Context, name string) (*mcp.Conn, error) {
	if _, err := w.awaiting(name); err != nil {
		return nil, err
	}
	c, release, err := w.mgr.Acquire(ctx, name)
	if err != nil {
		return nil, err
	}
	release()
	return c, nil
}

// connected returns the Conns of server, or of every connected server for
// "", by name.
func (w *Workspace) connected(ctx context.Context, server string) ([]*mcp.Conn, error) {
	if server != "" {
		c, err := w.conn(ctx, server)
		if err != nil {
			return nil, err
		}
		return []*mcp.Conn{c}, nil
	}
	var out []*mcp.Conn
	for _, st := range w.mgr.Statuses() {
		if st.State != mcp.StateConnected {
			continue
		}
		if c, ok := w.mgr.Conn(st.Name); ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// Resources returns the resources of server, or of every connected server
// for "" (by server, in each server's order). A named server that is
// connecting is waited for, within ctx; one that declares no resources
// has none.
func (w *Workspace) Resources(ctx context.Context, server string) ([]ResourceInfo, error) {
	conns, err := w.connected(ctx, server)
	if err != nil {
		return nil, err
	}
	out := []ResourceInfo{}
	var errs []error
	for _, c := range conns {
		list, err := c.Resources(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, r := range list {
			out = append(out, ResourceInfo{Server: c.Name(), URI: r.URI, Name: r.Name, Title: r.Title, MIMEType: r.MIMEType, Description: r.Description})
		}
	}
	if server != "" && len(errs) > 0 {
		return nil, errs[0]
	}
	return out, nil
}

// Prompts returns the prompts of server, or of every connected server for
// "", as Resources returns resources.
func (w *Workspace) Prompts(ctx context.Context, server string) ([]PromptInfo, error) {
	conns, err := w.connected(ctx, server)
	if err != nil {
		return nil, err
	}
	out := []PromptInfo{}
	var errs []error
	for _, c := range conns {
		list, err := c.Prompts(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, p := range list {
			out = append(out, PromptInfo{Server: c.Name(), Name: p.Name, Title: p.Title, Description: p.Description, Arguments: p.Arguments})
		}
	}
	if server != "" && len(errs) > 0 {
		return nil, errs[0]
	}
	return out, nil
}

// ReadResource reads the resource uri of server. What the server asks
// meanwhile goes to asker (nil: nobody).
func (w *Workspace) ReadResource(ctx context.Context, server, uri string, asker orchestrator.Asker) (*mcpsdk.ReadResourceResult, error) {
	c, err := w.conn(ctx, server)
	if err != nil {
		return nil, err
	}
	return c.ReadResource(ctx, uri, asker)
}

// GetPrompt gets the prompt name of server with args. What the server asks
// meanwhile goes to asker (nil: nobody).
func (w *Workspace) GetPrompt(ctx context.Context, server, name string, args map[string]string, asker orchestrator.Asker) (*mcpsdk.GetPromptResult, error) {
	c, err := w.conn(ctx, server)
	if err != nil {
		return nil, err
	}
	return c.GetPrompt(ctx, name, args, asker)
}
