package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// connect runs the demo server in-process and returns a client session on it.
func connect(t *testing.T, proj project, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := newServer("freecode-demo", proj).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

func TestToolList(t *testing.T) {
	cs := connect(t, newMemProject(), nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	type marks struct{ ReadOnly, Destructive bool }
	got := map[string]marks{}
	for _, tool := range res.Tools {
		a := tool.Annotations
		got[tool.Name] = marks{a.ReadOnlyHint, a.DestructiveHint != nil && *a.DestructiveHint}
	}
	want := map[string]marks{
		"list_files":   {ReadOnly: true},
		"read_file":    {ReadOnly: true},
		"search":       {ReadOnly: true},
		"echo":         {ReadOnly: true},
		"delete_file":  {Destructive: true},
		"create_issue": {},
		"build":        {},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}

	// The fixture's point: create_issue keeps its hand-written $defs/$ref.
	for _, tool := range res.Tools {
		if tool.Name != "create_issue" {
			continue
		}
		b, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Defs       map[string]any `json:"$defs"`
			Properties struct {
				Assignee map[string]string `json:"assignee"`
				Labels   struct {
					Items map[string]string `json:"items"`
				} `json:"labels"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		if s.Defs["user"] == nil || s.Properties.Assignee["$ref"] != "#/$defs/user" || s.Properties.Labels.Items["$ref"] != "#/$defs/label" {
			t.Errorf("create_issue schema lost its $defs/$ref: %s", b)
		}
	}
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.(*mcp.TextContent).Text)
	}
	return b.String(), res.IsError
}

func TestCalls(t *testing.T) {
	tests := []struct {
		name    string
		tool    string
		args    any
		want    string
		wantErr bool
	}{
		{"list root", "list_files", map[string]any{}, "README.md\ndocs/\ngo.mod\ninternal/\nmain.go", false},
		{"list recursive", "list_files", map[string]any{"path": "internal", "recursive": true}, "greet/greet.go\ngreet/greet_test.go", false},
		{"list missing", "list_files", map[string]any{"path": "nope"}, "nope: no such directory", true},
		{"read", "read_file", map[string]any{"path": "go.mod"}, "module example.com/greeter\n\ngo 1.22\n", false},
		{"read lines", "read_file", map[string]any{"path": "main.go", "offset": 10, "limit": 1}, "\t// TODO: take the name from the command line.\n", false},
		{"read escape", "read_file", map[string]any{"path": "../etc/passwd"}, `path "../etc/passwd" leaves the project root`, true},
		{"read absolute", "read_file", map[string]any{"path": "/etc/passwd"}, `path "/etc/passwd" must be relative to the project root`, true},
		{"search", "search", map[string]any{"query": "TODO"}, "docs/notes.md:3: - TODO: add a --shout flag.\nmain.go:10: // TODO: take the name from the command line.", false},
		{"search limit", "search", map[string]any{"query": "TODO", "maxResults": 1}, "docs/notes.md:3: - TODO: add a --shout flag.", false},
		{"search none", "search", map[string]any{"query": "zebra"}, "no matches", false},
		{"echo", "echo", map[string]any{"message": "héllo"}, "héllo", false},
		{"echo missing arg", "echo", map[string]any{}, "missing property 'message'", true},
		{"unknown arg", "echo", map[string]any{"message": "x", "loud": true}, "additional properties 'loud' not allowed", true},
		{"issue", "create_issue", map[string]any{
			"title":    "Add --shout",
			"labels":   []map[string]string{{"name": "feature", "color": "#00ff00"}, {"name": "good first issue"}},
			"assignee": map[string]string{"login": "ada"},
			"tasks":    []map[string]any{{"text": "flag", "subtasks": []map[string]string{{"text": "parse"}}}},
		}, "Created issue #1: Add --shout [feature, good first issue] assigned to @ada", false},
		{"issue bad label", "create_issue", map[string]any{"title": "x", "labels": []map[string]string{{"name": "a", "color": "green"}}}, "does not match pattern", true},
		{"build", "build", map[string]any{"steps": 2, "seconds": 0}, "build succeeded in 2 steps\nstep 1/2\nstep 2/2", false},
		{"build fails", "build", map[string]any{"steps": 2, "seconds": 0, "fail": true}, "build failed at step 2/2: exit status 1", true},
		{"delete", "delete_file", map[string]any{"path": "docs/notes.md"}, "deleted docs/notes.md", false},
		{"delete again", "delete_file", map[string]any{"path": "docs/notes.md"}, "docs/notes.md: no such file", true},
		{"after delete", "search", map[string]any{"query": "TODO"}, "main.go:10: // TODO: take the name from the command line.", false},
	}
	// One session for all: the cases run in order and later ones see
	// earlier deletions.
	cs := connect(t, newMemProject(), nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, isErr := call(t, cs, tc.tool, tc.args)
			if isErr != tc.wantErr {
				t.Errorf("isError = %v, want %v (%q)", isErr, tc.wantErr, got)
			}
			if tc.wantErr && !strings.Contains(got, tc.want) {
				t.Errorf("error %q does not contain %q", got, tc.want)
			}
			if !tc.wantErr {
				if d := cmp.Diff(tc.want, got); d != "" {
					t.Errorf("result (-want +got):\n%s", d)
				}
			}
		})
	}
}

func TestRootDir(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.txt")
	for name, data := range map[string]string{"a.txt": "alpha\n", "sub/b.txt": "beta\n", outside: "secret\n"} {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, name)
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cs := connect(t, &dirProject{root: r}, nil)

	if got, _ := call(t, cs, "list_files", map[string]any{"recursive": true}); got != "a.txt\nsub/b.txt" {
		t.Errorf("list_files = %q", got)
	}
	if got, isErr := call(t, cs, "read_file", map[string]any{"path": "link.txt"}); !isErr {
		t.Errorf("read through a symlink out of --root succeeded: %q", got)
	}
	if got, isErr := call(t, cs, "delete_file", map[string]any{"path": "sub/b.txt"}); isErr {
		t.Errorf("delete_file: %s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub/b.txt")); !os.IsNotExist(err) {
		t.Errorf("sub/b.txt still there: %v", err)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("file outside --root touched: %v", err)
	}
}

func TestBuildProgress(t *testing.T) {
	msgs := make(chan string, 100)
	cs := connect(t, newMemProject(), &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			msgs <- req.Params.Message
		},
	})
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "build", Arguments: map[string]any{"steps": 3, "seconds": 0}}
	if _, err := cs.CallTool(ctx, params); err != nil {
		t.Fatal(err)
	}

	// With a token, the same call reports progress. The client may run
	// handlers after the result arrives, so wait for them (a hang guard,
	// not a timing bound).
	params.SetProgressToken("tok")
	if _, err := cs.CallTool(ctx, params); err != nil {
		t.Fatal(err)
	}
	var got []string
	guard := time.After(time.Minute)
	for len(got) < 4 {
		select {
		case m := <-msgs:
			got = append(got, m)
		case <-guard:
			t.Fatalf("progress so far: %q", got)
		}
	}
	// Notifications of one request arrive in order, and none came from the
	// first call (which had no token) or they would lead the list.
	if d := cmp.Diff([]string{"build started", "step 1/3", "step 2/3", "step 3/3"}, got); d != "" {
		t.Errorf("progress (-want +got):\n%s", d)
	}
}

func TestBuildCancel(t *testing.T) {
	first := make(chan struct{})
	var once sync.Once
	cs := connect(t, newMemProject(), &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			once.Do(func() { close(first) })
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-first
		cancel()
	}()
	// 600 s in all: only the cancel can end it, and goleak in TestMain
	// catches a handler that keeps sleeping after it.
	params := &mcp.CallToolParams{Name: "build", Arguments: map[string]any{"steps": 2, "seconds": 600}}
	params.SetProgressToken(1)
	_, err := cs.CallTool(ctx, params)
	if err == nil {
		t.Fatal("cancelled build returned no error")
	}
	// The session survives the cancel.
	if got, _ := call(t, cs, "echo", map[string]any{"message": "still here"}); got != "still here" {
		t.Errorf("echo after cancel = %q", got)
	}
}
