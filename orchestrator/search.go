package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolSearchName is the id of the tool_search built-in.
const ToolSearchName = "tool_search"

// Bounds of tool_search's limit argument.
const (
	DefaultSearchLimit = 5
	MaxSearchLimit     = 20
)

// toolSearchOrder places tool_search after the other built-ins.
const toolSearchOrder = 1 << 20

// toolSearchSchema is tool_search's input schema.
const toolSearchSchema = `{"type":"object","properties":{` +
	`"query":{"type":"string","minLength":1,"description":"What the tool should do, in a few words (for example: create a GitHub issue)."},` +
	`"limit":{"type":"integer","minimum":1,"maximum":20,"description":"How many tools to return at most (default 5)."}},` +
	`"required":["query"],"additionalProperties":false}`

// toolSearchDescription is what a model is told of tool_search. It never
// says how many tools are deferred or which: the provider definitions, and
// so the prompt cache, must not change when they do.
const toolSearchDescription = "Find tools that are available but not listed here, to save context. " +
	"Returns the best matches for what you need, each with its name, description and input schema; " +
	"\"more\" says how many other tools matched. A query that is a tool's exact name returns that tool first, " +
	"and \"select:name1,name2\" returns just the tools named. " +
	"Call a tool you found by its name, with arguments that match its input schema."

// ToolSearchOptions configures NewToolSearch. A nil *ToolSearchOptions
// means defaults.
type ToolSearchOptions struct {
	// Searchable reports whether a tool is searched: the workspace
	// searches the deferred tools, whose definitions the model has not
	// been sent. Nil means every tool. tool_search never finds itself,
	// nor a tool kept from models (Tool.Hidden).
	Searchable func(*Tool) bool
	// Skip, if set, is asked at every search about each tool that would be
	// returned: those it reports are left out. The workspace leaves out
	// the tools a deny rule forbids, which a model must not be offered;
	// asked per search, a rule change counts at once.
	Skip func(*Tool) bool
	// OnFound, if set, is told the tools each search returns, before it
	// returns them: the workspace starts the idle servers on demand they
	// belong to, so that the call likely to follow finds them up.
	OnFound func([]*Tool)
}

// ToolSearch is the tool_search built-in: a BM25F ranking of the
// registry's tools by their name, their server's name, title, description
// and parameters (searchfields.go), with the words of identifiers split
// and a small vocabulary of tool verbs (searchvocab.go). Its index is
// built on the first search after Invalidate.
//
// Finding a tool is not what makes it callable: a deferred tool is called
// by its name like any other, and the permission gate decides. The
// orchestrator keeps no conversation state to know what a model has seen,
// and a tool's schema being out of sight is no permission; the rules are.
type ToolSearch struct {
	NoServer // a built-in: its Runner runs in-process

	reg  *Registry
	opts ToolSearchOptions
	tool *Tool

	gen     atomic.Uint64 // bumped by Invalidate
	index   atomic.Pointer[builtIndex]
	buildMu sync.Mutex // one build at a time
}

// builtIndex is an index and the generation it was built in.
type builtIndex struct {
	idx *searchIndex
	gen uint64
}

// NewToolSearch returns the tool_search built-in over reg. Register its
// Tool, and call Invalidate whenever the registry, or what Searchable
// says, changes.
func NewToolSearch(reg *Registry, opts *ToolSearchOptions) *ToolSearch {
	s := &ToolSearch{reg: reg}
	if opts != nil {
		s.opts = *opts
	}
	s.tool = &Tool{
		ID:          ToolSearchName,
		Title:       "Tool search",
		Description: toolSearchDescription,
		ReadOnly:    true,
		InputSchema: json.RawMessage(toolSearchSchema),
		Runner:      s,
		Order:       toolSearchOrder,
	}
	return s
}

// Tool returns the built-in to register.
func (s *ToolSearch) Tool() *Tool { return s.tool }

// Invalidate drops the index: the next search builds it anew.
func (s *ToolSearch) Invalidate() {
	s.gen.Add(1)
	s.index.Store(nil)
}

// Search returns the searchable tools that match query, best first, at
// most limit of them (DefaultSearchLimit when limit <= 0).
func (s *ToolSearch) Search(query string, limit int) []*Tool {
	found, _ := s.find(query, limit)
	return found
}

// selectPrefix starts a query that names the tools it wants:
// "select:<id>[,<id>…]".
const selectPrefix = "select:"

// find is Search, and also says how many more tools matched than were
// returned. A query that is a tool's id (or alias) returns that tool
// first, then the others that match its words; "select:" followed by ids
// returns those tools alone, in that order.
func (s *ToolSearch) find(query string, limit int) (found []*Tool, more int) {
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	idx := s.current()
	skip := s.opts.Skip
	kept := func(t *Tool) bool { return skip == nil || !skip(t) }
	q := strings.TrimSpace(query)
	if names, ok := strings.CutPrefix(q, selectPrefix); ok {
		for name := range strings.SplitSeq(names, ",") {
			if t, ok := idx.lookup(strings.TrimSpace(name)); ok && kept(t) && !slices.Contains(found, t) {
				found = append(found, t)
			}
		}
		more = max(len(found)-limit, 0)
		found = found[:min(len(found), limit)]
	} else if t, ok := idx.lookup(q); ok && kept(t) {
		rest, n := idx.search(q, limit-1, func(o *Tool) bool { return o == t || !kept(o) })
		found, more = append([]*Tool{t}, rest...), n
	} else {
		found, more = idx.search(q, limit, skip)
	}
	if s.opts.OnFound != nil && len(found) > 0 {
		s.opts.OnFound(found)
	}
	return found, more
}

// current returns an index of the registry as it is now.
func (s *ToolSearch) current() *searchIndex {
	if b := s.index.Load(); b != nil {
		return b.idx
	}
	s.buildMu.Lock()
	defer s.buildMu.Unlock()
	if b := s.index.Load(); b != nil {
		return b.idx
	}
	gen := s.gen.Load()
	var tools []*Tool
	for _, t := range s.reg.Tools("") {
		if t.ID != ToolSearchName && t.offeredToModels() && (s.opts.Searchable == nil || s.opts.Searchable(t)) {
			tools = append(tools, t)
		}
	}
	idx := newSearchIndex(tools)
	// An Invalidate that came during the build makes this index stale:
	// it answers this search, and the next builds again.
	if s.gen.Load() == gen {
		s.index.CompareAndSwap(nil, &builtIndex{idx: idx, gen: gen})
	}
	return idx
}

// FoundTool is one tool in tool_search's result: what a model needs to
// call it.
type FoundTool struct {
	// Name is what to call the tool by: its id, or its alias when the id
	// is longer than providers allow.
	Name        string          `json:"name"`
	ID          string          `json:"id,omitempty"` // when Name is an alias
	Server      string          `json:"server,omitempty"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	ReadOnly    bool            `json:"readOnly,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// SearchResult is tool_search's structured result.
type SearchResult struct {
	Query string      `json:"query"`
	Tools []FoundTool `json:"tools"`
	// More is how many other tools matched, left out by the limit.
	More int `json:"more,omitempty"`
}

// CallTool runs tool_search: args are validated against its schema.
func (s *ToolSearch) CallTool(_ context.Context, call Call) (Outcome, error) {
	args := call.Args
	query, _ := args["query"].(string)
	limit := DefaultSearchLimit
	switch n := args["limit"].(type) {
	case json.Number:
		if v, err := strconv.Atoi(n.String()); err == nil {
			limit = v
		}
	case float64:
		limit = int(n)
	}
	limit = min(max(limit, 1), MaxSearchLimit)
	found, more := s.find(query, limit)
	res := SearchResult{Query: query, Tools: []FoundTool{}, More: more}
	for _, t := range found {
		ft := FoundTool{
			Name:        t.ProviderName(),
			Server:      t.Server,
			Title:       t.Title,
			Description: t.Description,
			ReadOnly:    t.ReadOnly,
			InputSchema: t.InputSchema,
		}
		if ft.Name != t.ID {
			ft.ID = t.ID
		}
		res.Tools = append(res.Tools, ft)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return Outcome{}, err
	}
	text := string(b)
	if len(res.Tools) == 0 {
		text = fmt.Sprintf("No tool matches %q. Try other words for what the tool does.", strings.TrimSpace(query))
	}
	return Outcome{Result: &mcpsdk.CallToolResult{
		Content:           []mcpsdk.Content{&mcpsdk.TextContent{Text: text}},
		StructuredContent: res,
	}}, nil
}
