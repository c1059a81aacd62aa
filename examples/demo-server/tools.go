package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Input schemas are written by hand, not inferred from Go types, because
// they are a fixture: clients (and FreeCode's provider adapters) must see
// exactly these shapes, $defs and $ref included.
const (
	listFilesSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory relative to the project root; default the root."},
    "recursive": {"type": "boolean", "description": "Include files in subdirectories.", "default": false}
  },
  "additionalProperties": false
}`
	readFileSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path relative to the project root."},
    "offset": {"type": "integer", "minimum": 1, "description": "First line to return (1-based)."},
    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines to return."}
  },
  "required": ["path"],
  "additionalProperties": false
}`
	searchSchema = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "description": "Text to look for (case-sensitive substring)."},
    "path": {"type": "string", "description": "Only search under this directory."},
    "maxResults": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50}
  },
  "required": ["query"],
  "additionalProperties": false
}`
	echoSchema = `{
  "type": "object",
  "properties": {
    "message": {"type": "string", "description": "Text to send back unchanged."}
  },
  "required": ["message"],
  "additionalProperties": false
}`
	deleteFileSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path relative to the project root."}
  },
  "required": ["path"],
  "additionalProperties": false
}`
	createIssueSchema = `{
  "type": "object",
  "$defs": {
    "user": {
      "type": "object",
      "properties": {
        "login": {"type": "string", "pattern": "^[A-Za-z0-9-]{1,39}$"},
        "email": {"type": "string"}
      },
      "required": ["login"],
      "additionalProperties": false
    },
    "label": {
      "type": "object",
      "properties": {
        "name": {"type": "string", "minLength": 1},
        "color": {"type": "string", "pattern": "^#[0-9a-fA-F]{6}$"}
      },
      "required": ["name"],
      "additionalProperties": false
    }
  },
  "properties": {
    "title": {"type": "string", "minLength": 1, "maxLength": 200},
    "body": {"type": "string"},
    "labels": {"type": "array", "items": {"$ref": "#/$defs/label"}, "maxItems": 20},
    "assignee": {"$ref": "#/$defs/user"},
    "tasks": {
      "type": "array",
      "description": "A checklist: each task may have subtasks.",
      "items": {
        "type": "object",
        "properties": {
          "text": {"type": "string"},
          "done": {"type": "boolean", "default": false},
          "subtasks": {"type": "array", "items": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}
        },
        "required": ["text"]
      }
    },
    "priority": {"type": "string", "enum": ["low", "medium", "high"], "default": "medium"}
  },
  "required": ["title"],
  "additionalProperties": false
}`
	buildSchema = `{
  "type": "object",
  "properties": {
    "steps": {"type": "integer", "minimum": 1, "maximum": 100, "default": 5, "description": "Number of build steps; one progress notification each."},
    "seconds": {"type": "number", "minimum": 0, "maximum": 600, "default": 1, "description": "Total duration of the build."},
    "fail": {"type": "boolean", "default": false, "description": "Make the last step fail (the result has isError)."}
  },
  "additionalProperties": false
}`
)

func ptr[T any](v T) *T { return &v }

// demo holds the server's state: the project and the issue counter.
type demo struct {
	proj project

	issuesMu  sync.Mutex
	nextIssue int
}

// addTools registers the demo tools on s. Each input is validated against
// its schema before the handler runs; a bad input is a tool error (isError),
// as the spec asks, not a JSON-RPC error.
func (d *demo) addTools(s *mcp.Server) {
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
	d.add(s, &mcp.Tool{
		Name:        "list_files",
		Description: "List the files of the project, optionally under one directory and recursively.",
		Annotations: ro,
	}, listFilesSchema, d.listFiles)
	d.add(s, &mcp.Tool{
		Name:        "read_file",
		Description: "Read a file of the project, optionally a range of its lines.",
		Annotations: ro,
	}, readFileSchema, d.readFile)
	d.add(s, &mcp.Tool{
		Name:        "search",
		Description: "Search the project's files for a substring; returns path:line: text for each match.",
		Annotations: ro,
	}, searchSchema, d.search)
	d.add(s, &mcp.Tool{
		Name:        "echo",
		Description: "Return the message unchanged (for tests and benchmarks).",
		Annotations: ro,
	}, echoSchema, d.echo)
	d.add(s, &mcp.Tool{
		Name:        "delete_file",
		Description: "Delete a file of the project. Cannot be undone.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)},
	}, deleteFileSchema, d.deleteFile)
	d.add(s, &mcp.Tool{
		Name:        "create_issue",
		Description: "File an issue in the demo tracker, with labels, an assignee and a nested task list.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, createIssueSchema, d.createIssue)
	d.add(s, &mcp.Tool{
		Name:        "build",
		Description: "Run a simulated build: sends progress notifications when asked and stops when cancelled.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, buildSchema, d.build)
}

// handler gets the validated arguments, decoded into a generic map only for
// validation; each handler decodes them again into its own struct.
type handler func(ctx context.Context, req *mcp.CallToolRequest, args json.RawMessage) (*mcp.CallToolResult, error)

func (d *demo) add(s *mcp.Server, t *mcp.Tool, schema string, h handler) {
	check := compileSchema(t, schema)
	s.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, bad := check(req.Params.Arguments)
		if bad != nil {
			return bad, nil
		}
		res, err := h(ctx, req, args)
		if err != nil {
			if ctx.Err() != nil {
				// Cancelled: the SDK drops the answer; returning the
				// context error keeps the handler from lying about success.
				return nil, ctx.Err()
			}
			return toolError(err), nil
		}
		return res, nil
	})
}

// compileSchema sets schema as t's input schema and returns the check of
// arguments against it: the arguments ({} for none), or the tool error to
// answer with.
func compileSchema(t *mcp.Tool, schema string) func(json.RawMessage) (json.RawMessage, *mcp.CallToolResult) {
	t.InputSchema = json.RawMessage(schema)
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		panic(fmt.Sprintf("schema of %s: %v", t.Name, err))
	}
	c := jsonschema.NewCompiler()
	url := "mem://demo/" + t.Name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		panic(fmt.Sprintf("schema of %s: %v", t.Name, err))
	}
	sch := c.MustCompile(url)
	return func(args json.RawMessage) (json.RawMessage, *mcp.CallToolResult) {
		if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
			args = json.RawMessage("{}")
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
		if err != nil {
			return nil, toolError(fmt.Errorf("arguments are not JSON: %v", err))
		}
		if err := sch.Validate(v); err != nil {
			return nil, toolError(fmt.Errorf("invalid arguments for %s: %v", t.Name, err))
		}
		return args, nil
	}
}

func toolError(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// under reports whether file is dir or inside it ("." is the root).
func under(file, dir string) bool {
	return dir == "." || file == dir || strings.HasPrefix(file, dir+"/")
}

func (d *demo) listFiles(_ context.Context, _ *mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var args struct {
		Path      string `json:"path"`
		Recursive bool   `json:"recursive"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, err
	}
	dir, err := cleanPath(args.Path)
	if err != nil {
		return nil, err
	}
	files, err := d.proj.Files()
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, f := range files {
		if !under(f, dir) || f == dir {
			continue
		}
		rel := f
		if dir != "." {
			rel = strings.TrimPrefix(f, dir+"/")
		}
		if !args.Recursive {
			if i := strings.IndexByte(rel, '/'); i >= 0 {
				rel = rel[:i+1] // a subdirectory, listed once with a trailing slash
			}
		}
		if !seen[rel] {
			seen[rel] = true
			out = append(out, rel)
		}
	}
	if len(out) == 0 {
		if dir != "." {
			return nil, fmt.Errorf("%s: no such directory", dir)
		}
		return text("(empty project)"), nil
	}
	return text(strings.Join(out, "\n")), nil
}

func (d *demo) readFile(_ context.Context, _ *mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var args struct {
		Path   string `json:"path"`
		Offset int    `json:"offset"`
		Limit  int    `json:"limit"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, err
	}
	name, err := cleanPath(args.Path)
	if err != nil {
		return nil, err
	}
	b, err := d.proj.Read(name)
	if err != nil {
		return nil, err
	}
	if args.Offset == 0 && args.Limit == 0 {
		return text(string(b)), nil
	}
	lines := strings.SplitAfter(string(b), "\n")
	start := max(args.Offset, 1) - 1
	if start >= len(lines) {
		return nil, fmt.Errorf("%s has %d lines; offset %d is past the end", name, len(lines), args.Offset)
	}
	end := len(lines)
	if args.Limit > 0 {
		end = min(end, start+args.Limit)
	}
	return text(strings.Join(lines[start:end], "")), nil
}

func (d *demo) search(ctx context.Context, _ *mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	args := struct {
		Query      string `json:"query"`
		Path       string `json:"path"`
		MaxResults int    `json:"maxResults"`
	}{MaxResults: 50}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, err
	}
	dir, err := cleanPath(args.Path)
	if err != nil {
		return nil, err
	}
	files, err := d.proj.Files()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		if len(out) >= args.MaxResults || ctx.Err() != nil {
			break
		}
		if !under(f, dir) {
			continue
		}
		b, err := d.proj.Read(f)
		if err != nil {
			continue
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, args.Query) {
				out = append(out, fmt.Sprintf("%s:%d: %s", f, i+1, strings.TrimSpace(line)))
				if len(out) >= args.MaxResults {
					break
				}
			}
		}
	}
	if len(out) == 0 {
		return text("no matches"), nil
	}
	return text(strings.Join(out, "\n")), ctx.Err()
}

func (d *demo) echo(_ context.Context, _ *mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var args struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, err
	}
	return text(args.Message), nil
}

func (d *demo) deleteFile(_ context.Context, _ *mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var args struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, err
	}
	name, err := cleanPath(args.Path)
	if err != nil {
		return nil, err
	}
	if name == "." {
		return nil, errors.New("refusing to delete the project root")
	}
	if err := d.proj.Remove(name); err != nil {
		return nil, err
	}
	return text("deleted " + name), nil
}

// issue is create_issue's structured result.
type issue struct {
	Number   int     `json:"number"`
	Title    string  `json:"title"`
	Body     string  `json:"body,omitempty"`
	Labels   []label `json:"labels"`
	Assignee *user   `json:"assignee,omitempty"`
	Tasks    []task  `json:"tasks,omitempty"`
	Priority string  `json:"priority"`
	State    string  `json:"state"`
}

type label struct {
	Name  string `json:"name"`
	Color string `json:"color,omitempty"`
}

type user struct {
	Login string `json:"login"`
	Email string `json:"email,omitempty"`
}

type task struct {
	Text     string `json:"text"`
	Done     bool   `json:"done"`
	Subtasks []struct {
		Text string `json:"text"`
	} `json:"subtasks,omitempty"`
}

func (d *demo) createIssue(_ context.Context, _ *mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	is := issue{Priority: "medium", State: "open", Labels: []label{}}
	if err := json.Unmarshal(raw, &is); err != nil {
		return nil, err
	}
	d.issuesMu.Lock()
	d.nextIssue++
	is.Number = d.nextIssue
	d.issuesMu.Unlock()

	var b strings.Builder
	fmt.Fprintf(&b, "Created issue #%d: %s", is.Number, is.Title)
	if len(is.Labels) > 0 {
		names := make([]string, len(is.Labels))
		for i, l := range is.Labels {
			names[i] = l.Name
		}
		fmt.Fprintf(&b, " [%s]", strings.Join(names, ", "))
	}
	if is.Assignee != nil {
		fmt.Fprintf(&b, " assigned to @%s", is.Assignee.Login)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: b.String()}},
		StructuredContent: is,
	}, nil
}

func (d *demo) build(ctx context.Context, req *mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	args := struct {
		Steps   int     `json:"steps"`
		Seconds float64 `json:"seconds"`
		Fail    bool    `json:"fail"`
	}{Steps: 5, Seconds: 1}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, err
	}
	// Progress only on request: a client that sent no token must not get
	// notifications it cannot route. The first one goes out at once, so a
	// client knows the build runs before the first step ends.
	token := req.Params.GetProgressToken()
	progress := func(i int, msg string) error {
		if token == nil {
			return nil
		}
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      float64(i),
			Total:         float64(args.Steps),
			Message:       msg,
		})
		return cmp.Or(ctx.Err(), err)
	}
	if err := progress(0, "build started"); ctx.Err() != nil {
		return nil, err
	}
	per := time.Duration(args.Seconds * float64(time.Second) / float64(args.Steps))
	t := time.NewTimer(per)
	defer t.Stop()
	var log []string
	for i := 1; i <= args.Steps; i++ {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
			t.Reset(per)
		}
		msg := fmt.Sprintf("step %d/%d", i, args.Steps)
		log = append(log, msg)
		if args.Fail && i == args.Steps {
			return nil, fmt.Errorf("build failed at %s: exit status 1", msg)
		}
		if err := progress(i, msg); ctx.Err() != nil {
			return nil, err
		}
	}
	return text(fmt.Sprintf("build succeeded in %d steps\n%s", args.Steps, strings.Join(log, "\n"))), nil
}
