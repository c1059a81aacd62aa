// Command demo-server is FreeCode's demo MCP server, over stdio. `make demo`
// connects the CLI to it, and the orchestrator's tests use it as a fixture:
// the tool names and input schemas below are stable, and changing one is a
// breaking change for those tests.
//
// Usage:
//
//	demo-server [--root DIR] [--name NAME] [--apps] [--tasks] [--tasks-dir DIR] [--task-fixtures] [--http ADDR]
//
// Without --root the tools work on a small built-in Go project held in
// memory (README.md, go.mod, main.go, internal/greet/greet.go,
// internal/greet/greet_test.go, docs/notes.md); with --root they work on
// that directory, and no file outside it is ever read or written. There is
// no network access and the output is deterministic. With --http it serves
// Streamable HTTP at http://ADDR/mcp instead (every revision; 2026-07-28
// without sessions), and says "demo-server: listening on <url>" on stderr.
//
// Tools (annotations in brackets; every input is validated against its
// schema, and a bad input is a result with isError, not a protocol error):
//
//   - list_files {path?: string, recursive?: bool} [readOnly, idempotent]
//     Lists files under path, one per line; without recursive, a
//     subdirectory shows once as "name/".
//   - read_file {path: string, offset?: int>=1, limit?: int>=1} [readOnly, idempotent]
//     Returns the file, or lines offset..offset+limit-1.
//   - search {query: string, path?: string, maxResults?: 1..1000 = 50} [readOnly, idempotent]
//     Case-sensitive substring search; one "path:line: text" per match.
//   - echo {message: string} [readOnly, idempotent]
//     Returns message unchanged (for tests and benchmarks).
//   - delete_file {path: string} [destructive]
//     Deletes one file (in memory, or under --root).
//   - create_issue {title: string, body?: string, labels?: [{name, color?}],
//     assignee?: {$ref: #/$defs/user}, tasks?: [{text, done?, subtasks?: [{text}]}],
//     priority?: low|medium|high} [not destructive]
//     The schema has "$defs" (user, label) and "$ref"s to them, and nested
//     arrays of objects. Issue numbers count from 1 per process; the result
//     has structuredContent with the issue.
//   - build {steps?: 1..100 = 5, seconds?: 0..600 = 1, fail?: bool} [not destructive, idempotent]
//     Sleeps seconds/steps per step. Only when the request carries a
//     progress token it sends notifications/progress: progress=0 "build
//     started" at once, then progress=i, total=steps, "step i/steps"; returns as soon as the request is
//     cancelled. fail makes the last step a tool error.
//
// With --apps, one more (apps.go), left out otherwise so that the list above
// stays the fixture it is:
//
//   - show_files {path?: string} [readOnly, idempotent]
//     Lists the files under path (recursively) as text and as
//     structuredContent {path, files}; its _meta.ui.resourceUri (and the older
//     flat _meta["ui/resourceUri"]) names ui://NAME/files.html, an MCP Apps
//     view (text/html;profile=mcp-app) that lists them with a Delete button
//     each, which asks the host to call delete_file.
//
// With --tasks, one more (tasks.go), left out otherwise so that the list
// above stays the fixture it is; it runs as an MCP task (extension
// io.modelcontextprotocol/tasks) for a client that declares the extension:
//
//   - long_build {steps?: 1..20 = 4, seconds?: 0..600 = 4, ask?: bool = true} [not destructive]
//     statusMessage "step i/steps" each step, then (ask) input_required with
//     a form {publish: boolean}; "build passed: <steps> steps in
//     <seconds>s; published" or "not published (...)". Cancelling the task
//     stops it. Without the extension it runs in the call, asking by
//     elicitation where it can.
//
// Tasks are kept in memory, or with --tasks-dir in that directory, where a
// restarted server resumes the unfinished ones. --task-fixtures adds the
// tools the MCP conformance suite's tasks-* scenarios call (greet,
// slow_compute, failing_job, protocol_error_job, confirm_delete,
// multi_input, test_tool_with_task).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// version is reported in initialize.
const version = "1.0.0"

func newServer(name string, proj project) *mcp.Server { return newServerWith(name, proj, false) }

// newServerWith is newServer, with the MCP Apps view and show_files when apps is set (apps.go).
func newServerWith(name string, proj project, apps bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Title: "FreeCode demo server", Version: version}, &mcp.ServerOptions{
		Instructions: "A demo project: list, read and search its files; delete_file is destructive; build reports progress.",
		Logger:       slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	d := &demo{proj: proj}
	d.addTools(s)
	if apps {
		d.addApp(s, name)
	}
	return s
}

func main() {
	root := flag.String("root", "", "work on this directory instead of the built-in sample project")
	name := flag.String("name", "freecode-demo", "server name reported in initialize")
	apps := flag.Bool("apps", false, "serve an MCP Apps view and show_files, the tool that names it")
	var tc taskConfig
	flag.BoolVar(&tc.tools, "tasks", false, "serve long_build, a tool that runs as an MCP task")
	flag.StringVar(&tc.dir, "tasks-dir", "", "keep tasks in this directory, resuming unfinished ones at start")
	flag.BoolVar(&tc.fixtures, "task-fixtures", false, "serve the conformance suite's task fixture tools")
	httpAddr := flag.String("http", "", "serve Streamable HTTP on this address (host:port) instead of stdio")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "demo-server: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}

	var proj project = newMemProject()
	if *root != "" {
		r, err := os.OpenRoot(*root)
		if err != nil {
			fmt.Fprintf(os.Stderr, "demo-server: %v\n", err)
			os.Exit(1)
		}
		defer r.Close()
		proj = &dirProject{root: r}
	}

	// SIGTERM is how a client stops a server that ignores stdin EOF; exit
	// cleanly on it rather than dying mid-write.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := newServerWith(*name, proj, *apps)
	stopTasks, err := addTasks(s, tc)
	if err != nil {
		fmt.Fprintf(os.Stderr, "demo-server: %v\n", err)
		os.Exit(1)
	}
	defer stopTasks()
	if *httpAddr != "" {
		err = serveHTTP(ctx, *httpAddr, s)
	} else {
		err = s.Run(ctx, &mcp.StdioTransport{})
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "demo-server: %v\n", err)
		os.Exit(1)
	}
}
