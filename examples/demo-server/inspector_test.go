package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestInspectorCLI drives the built demo server with a client that is not
// ours: @modelcontextprotocol/inspector-cli (the TypeScript SDK underneath),
// as a user would to check a server by hand.
func TestInspectorCLI(t *testing.T) {
	npm := os.Getenv("FREECODE_NPM")
	if npm == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("FREECODE_NPM is not set")
		}
		t.Skip("FREECODE_NPM is not set (make test sets it)")
	}
	bin := filepath.Join(t.TempDir(), "demo-server")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building demo-server: %v\n%s", err, out)
	}
	cli := filepath.Join(npm, "@modelcontextprotocol/inspector-cli/build/cli.js")

	inspect := func(t *testing.T, args ...string) json.RawMessage {
		t.Helper()
		// A hang guard only, not a timing bound.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "node", append([]string{cli, "--cli", bin}, args...)...)
		// inspector-cli reads its own package.json through a path relative
		// to the working directory: it must run from a directory whose
		// parent holds a package.json (interop/ does).
		cmd.Dir = npm
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("inspector-cli %v: %v\n%s", args, err, out)
		}
		// The result is the JSON object after a deprecation banner.
		i := slices.Index(out, '{')
		if i < 0 {
			t.Fatalf("inspector-cli %v printed no JSON:\n%s", args, out)
		}
		return out[i:]
	}

	t.Run("tools/list", func(t *testing.T) {
		var res struct {
			Tools []struct {
				Name        string `json:"name"`
				Annotations struct {
					ReadOnlyHint    bool `json:"readOnlyHint"`
					DestructiveHint bool `json:"destructiveHint"`
				} `json:"annotations"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(inspect(t, "--method", "tools/list"), &res); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			if tool.Name == "delete_file" && (!tool.Annotations.DestructiveHint || tool.Annotations.ReadOnlyHint) {
				t.Errorf("delete_file annotations seen by inspector-cli: %+v", tool.Annotations)
			}
			if tool.Name == "search" && !tool.Annotations.ReadOnlyHint {
				t.Errorf("search is not read-only to inspector-cli")
			}
		}
		slices.Sort(names)
		want := []string{"build", "create_issue", "delete_file", "echo", "list_files", "read_file", "search"}
		if !slices.Equal(names, want) {
			t.Errorf("inspector-cli lists %v, want %v", names, want)
		}
	})

	type result struct {
		Content []struct {
			Type, Text string
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	t.Run("tools/call", func(t *testing.T) {
		var res result
		if err := json.Unmarshal(inspect(t, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hello from inspector"), &res); err != nil {
			t.Fatal(err)
		}
		if res.IsError || len(res.Content) != 1 || res.Content[0].Text != "hello from inspector" {
			t.Errorf("echo through inspector-cli: %+v", res)
		}
	})
	t.Run("invalid arguments", func(t *testing.T) {
		var res result
		if err := json.Unmarshal(inspect(t, "--method", "tools/call", "--tool-name", "create_issue", "--tool-arg", "title=5"), &res); err != nil {
			t.Fatal(err)
		}
		if !res.IsError || len(res.Content) == 0 {
			t.Errorf("create_issue with a numeric title: want an isError result, got %+v", res)
		}
	})
}
