// Command demo-server is FreeCode's demo MCP server, over stdio. `make demo`
// connects the CLI to it, and the orchestrator's tests use it as a fixture:
// the tool names and input schemas below are stable, and changing one is a
// breaking change for those tests.
//
// Usage:
//
//	demo-server [--root DIR] [--name NAME] [--apps]
//
// Without --root the tools work on a small built-in Go project held in
// memory (README.md, go.mod, main.go, internal/greet/greet.go,
// internal/greet/greet_test.go, docs/notes.md); with --root they work on
// that directory, and no file outside it is ever read or written. There is
// no network access and the output is deterministic.
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
	err := newServerWith(*name, proj, *apps).Run(ctx, &mcp.StdioTransport{})
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "demo-server: %v\n", err)
		os.Exit(1)
	}
}
