package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server's resources and prompts. Unlike its tools they are not part of
// the connect: a server whose resources/list fails or hangs still serves
// its tools. The supervisor lists them right after each connect (for a
// server that declares them) and again on the server's list_changed; the
// Conn holds the lists, and OnListChanged hears of a real change only.

// The kinds of list a ListChanged is about.
const (
	ListResources = "resources"
	ListPrompts   = "prompts"
)

// ListChanged says that one server's resources or prompts changed, and
// why: "connected" (first listed, and not empty), "listChanged", "reconnected" (a
// reconnect brought a different list), "failed" or "stopped" (the list is
// gone with the server). Read the list again to see what it holds.
type ListChanged struct {
	Server string
	Kind   string // ListResources or ListPrompts
	Reason string
}

// ErrNotOffered means the server does not declare the capability asked
// for (resources, prompts) in its initialize result.
var ErrNotOffered = errors.New("not offered by the MCP server")

// listState is a server's resources and prompts as the Conn holds them;
// guarded by Conn.mu.
type listState struct {
	resources []*mcpsdk.Resource
	prompts   []*mcpsdk.Prompt
	// haveRes and havePrompts say the list is the server's (maybe empty),
	// not "none yet"; resErr and promptsErr are why the last listing
	// failed.
	haveRes, havePrompts bool
	resErr, promptsErr   error
}

// offers reports what s's server declared.
func offers(s *session) (resources, prompts bool) {
	ir := s.cs.InitializeResult()
	if ir == nil || ir.Capabilities == nil {
		return false, false
	}
	return ir.Capabilities.Resources != nil, ir.Capabilities.Prompts != nil
}

func (c *Conn) onResourcesChanged(context.Context, *mcpsdk.ResourceListChangedRequest) {
	kick(c.relistRes)
}

func (c *Conn) onPromptsChanged(context.Context, *mcpsdk.PromptListChangedRequest) {
	kick(c.relistPrompts)
}

// kick wakes a buffered-1 channel's reader without waiting.
func kick(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// listFeatures lists kinds of s; a failure is logged, and kept for
// Resources and Prompts to return.
func (c *Conn) listFeatures(s *session, kinds ...string) {
	for _, k := range kinds {
		if err := c.relistKind(s, k); err != nil && !s.ended() {
			c.logger.Warn("listing "+k, "error", c.hide(err))
		}
	}
}

// relistKind lists one kind of s and holds the result, telling
// OnListChanged if it differs from what was held.
func (c *Conn) relistKind(s *session, kind string) error {
	res, prompts := offers(s)
	ctx, cancel := c.withStop(context.Background())
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, c.srv.Timeout)
	defer cancelT()
	var (
		newRes     []*mcpsdk.Resource
		newPrompts []*mcpsdk.Prompt
		cut        string
		err        error
	)
	switch kind {
	case ListResources:
		if res {
			newRes, cut, err = listPages(ctx, c.listBytes, func(ctx context.Context, cursor string) ([]*mcpsdk.Resource, string, error) {
				r, err := s.cs.ListResources(ctx, &mcpsdk.ListResourcesParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return r.Resources, r.NextCursor, nil
			})
		}
	case ListPrompts:
		if prompts {
			newPrompts, cut, err = listPages(ctx, c.listBytes, func(ctx context.Context, cursor string) ([]*mcpsdk.Prompt, string, error) {
				r, err := s.cs.ListPrompts(ctx, &mcpsdk.ListPromptsParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return r.Prompts, r.NextCursor, nil
			})
		}
	}
	if cut != "" {
		c.logger.Warn(kind+"/list cut short", "reason", cut)
	}
	c.mu.Lock()
	if c.sess != s {
		c.mu.Unlock()
		return nil
	}
	l := &c.lists
	var changed, first bool
	switch kind {
	case ListResources:
		l.resErr = err
		if err == nil {
			first = !l.haveRes
			changed = first && len(newRes) > 0 || !first && !reflect.DeepEqual(l.resources, newRes)
			l.resources, l.haveRes = newRes, true
		}
	case ListPrompts:
		l.promptsErr = err
		if err == nil {
			first = !l.havePrompts
			changed = first && len(newPrompts) > 0 || !first && !reflect.DeepEqual(l.prompts, newPrompts)
			l.prompts, l.havePrompts = newPrompts, true
		}
	}
	c.mu.Unlock()
	if changed {
		reason := "listChanged"
		switch {
		case first:
			reason = "connected"
		case s.relisted[kind] == 0: // a new session's first listing
			reason = "reconnected"
		}
		c.emitList(kind, reason)
	}
	s.relisted[kind]++
	return err
}

// clearListsLocked drops the lists: the server is gone. It returns the
// kinds that held something, to tell OnListChanged.
func (c *Conn) clearListsLocked() []string {
	var had []string
	if len(c.lists.resources) > 0 {
		had = append(had, ListResources)
	}
	if len(c.lists.prompts) > 0 {
		had = append(had, ListPrompts)
	}
	c.lists = listState{}
	return had
}

func (c *Conn) emitList(kind, reason string) {
	if c.onLists != nil {
		c.onLists(ListChanged{Server: c.srv.Name, Kind: kind, Reason: reason})
	}
}

// listedSession returns the live session once its resources and prompts
// were listed for the first time, waiting within ctx.
func (c *Conn) listedSession(ctx context.Context) (*session, error) {
	s, err := c.liveSession(ctx)
	if err != nil {
		return nil, err
	}
	select {
	case <-s.listed:
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("%w: connection lost", ErrNotConnected)
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: resources and prompts not listed yet: %w", ErrNotConnected, ctx.Err())
	}
}

// Resources returns the server's resources (resources/list, every page),
// as listed after the connect and again on each list_changed. While the
// Conn connects, or the first listing runs, it waits within ctx. A server
// that declares no resources has none; a listing that failed is the
// error.
func (c *Conn) Resources(ctx context.Context) ([]*mcpsdk.Resource, error) {
	if _, err := c.listedSession(ctx); err != nil {
		return nil, fmt.Errorf("listing resources of %s: %w", c.srv.Name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.lists.haveRes && c.lists.resErr != nil {
		return nil, fmt.Errorf("listing resources of %s: %w", c.srv.Name, c.hide(c.lists.resErr))
	}
	return c.lists.resources, nil
}

// Prompts returns the server's prompts, as Resources returns resources.
func (c *Conn) Prompts(ctx context.Context) ([]*mcpsdk.Prompt, error) {
	if _, err := c.listedSession(ctx); err != nil {
		return nil, fmt.Errorf("listing prompts of %s: %w", c.srv.Name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.lists.havePrompts && c.lists.promptsErr != nil {
		return nil, fmt.Errorf("listing prompts of %s: %w", c.srv.Name, c.hide(c.lists.promptsErr))
	}
	return c.lists.prompts, nil
}

// ReadResource reads the resource uri (resources/read). While the Conn
// reconnects it waits, within ctx. What the server asks meanwhile
// (elicitation, sampling) goes to asker (nil: nobody).
func (c *Conn) ReadResource(ctx context.Context, uri string, asker Asker) (*mcpsdk.ReadResourceResult, error) {
	s, err := c.offered(ctx, ListResources)
	if err != nil {
		return nil, fmt.Errorf("reading %s from %s: %w", uri, c.srv.Name, err)
	}
	rctx, _, end := c.begin(ctx, s, asking{asker: asker})
	defer end()
	res, err := s.cs.ReadResource(rctx, &mcpsdk.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, fmt.Errorf("reading %s from %s: %w", uri, c.srv.Name, c.requestError(ctx, s, err))
	}
	res = uncached(res)
	keepViewInSandbox(c.srv, res)
	return res, nil
}

// GetPrompt gets the prompt name with args (prompts/get). Like
// ReadResource, it waits for a reconnect and sends what the server asks
// to asker.
func (c *Conn) GetPrompt(ctx context.Context, name string, args map[string]string, asker Asker) (*mcpsdk.GetPromptResult, error) {
	s, err := c.offered(ctx, ListPrompts)
	if err != nil {
		return nil, fmt.Errorf("getting prompt %s from %s: %w", name, c.srv.Name, err)
	}
	rctx, _, end := c.begin(ctx, s, asking{asker: asker})
	defer end()
	res, err := s.cs.GetPrompt(rctx, &mcpsdk.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("getting prompt %s from %s: %w", name, c.srv.Name, c.requestError(ctx, s, err))
	}
	return res, nil
}

// offered returns the live session if its server declares kind.
func (c *Conn) offered(ctx context.Context, kind string) (*session, error) {
	s, err := c.liveSession(ctx)
	if err != nil {
		return nil, err
	}
	res, prompts := offers(s)
	if kind == ListResources && !res || kind == ListPrompts && !prompts {
		return nil, fmt.Errorf("%s: %w", kind, ErrNotOffered)
	}
	return s, nil
}

// requestError is a failed request's error, secrets hidden; a transport
// that died under it marks the session lost, as for a tool call.
func (c *Conn) requestError(ctx context.Context, s *session, err error) error {
	err = c.hide(err)
	if ctx.Err() == nil && c.transportLost(s, err) {
		s.markLost()
		return fmt.Errorf("%w: %v", ErrConnectionLost, err)
	}
	return err
}

// uncached returns res for the caller and drops it from the go-sdk's cache
// of resources/read results, which under the newest protocol keeps every
// result read, by URI, for the session's life: unless the server asked for
// the result to be reused (a TTL), the cache keeps an empty copy.
func uncached(res *mcpsdk.ReadResourceResult) *mcpsdk.ReadResourceResult {
	if res == nil || res.TTLMs > 0 {
		return res
	}
	out := *res
	res.Contents = nil
	return &out
}

// listPages reads every page of a list. A server that repeats a cursor or
// hands out more than maxToolPages pages, or more than maxBytes of entries
// (as JSON), gets the entries read so far, with why the list was cut.
func listPages[T any](ctx context.Context, maxBytes int, page func(ctx context.Context, cursor string) ([]T, string, error)) ([]T, string, error) {
	var (
		out    []T
		seen   = map[string]bool{}
		cursor string
		size   int
	)
	for n := 0; ; n++ {
		if n == maxToolPages {
			return out, fmt.Sprintf("cut at %d pages: the server kept handing out cursors", maxToolPages), nil
		}
		items, next, err := page(ctx, cursor)
		if err != nil {
			return nil, "", err
		}
		for _, it := range items {
			b, err := json.Marshal(it)
			if err != nil {
				return nil, "", err
			}
			if size += len(b); size > maxBytes {
				return out, fmt.Sprintf("cut at %d entries: they passed the bound of %s on one list", len(out), formatBytes(maxBytes)), nil
			}
			out = append(out, it)
		}
		if next == "" {
			return out, "", nil
		}
		if seen[next] {
			return out, fmt.Sprintf("cut after %d pages: the server repeated a cursor", n+1), nil
		}
		seen[next] = true
		cursor = next
	}
}
