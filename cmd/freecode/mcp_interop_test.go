package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// npmDir returns $FREECODE_NPM (interop/node_modules, set by the Makefile).
// Without it the interop tests skip, except under CI where they must run.
func npmDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("FREECODE_NPM")
	if dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("FREECODE_NPM is not set (CI=true): run `make npm` and export FREECODE_NPM")
		}
		t.Skip("FREECODE_NPM not set; run through `make test` for the npm interop tests")
	}
	return dir
}

// TestInteropStart runs `freecode mcp start` on real npm MCP servers and
// checks the tool count against the official TypeScript SDK's client
// (testdata/count_tools.cjs) on the same server.
func TestInteropStart(t *testing.T) {
	npm := npmDir(t)
	pkg := func(name string) string {
		return filepath.Join(npm, "@modelcontextprotocol", name, "dist", "index.js")
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "files")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	memFile := filepath.Join(dir, "memory.json")
	tests := []struct {
		name string
		env  []string // K=V
		argv []string
		want int // per RECIPES.md, for a client that declares no capabilities
	}{
		// 13: server-everything adds get-roots-list only for a client with roots.
		{"everything", nil, []string{"node", pkg("server-everything"), "stdio"}, 13},
		{"filesystem", nil, []string{"node", pkg("server-filesystem"), root}, 14},
		{"memory", []string{"MEMORY_FILE_PATH=" + memFile}, []string{"node", pkg("server-memory")}, 9},
	}
	path := filepath.Join(dir, "config.json")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--config", path, "mcp", "add", tc.name, "local", "--timeout", "30s"}
			for _, kv := range tc.env {
				args = append(args, "--env", kv)
			}
			mustRun(t, append(append(args, "--"), tc.argv...)...)

			out := mustRun(t, "--config", path, "mcp", "start", tc.name)
			m := startedRe.FindStringSubmatch(out)
			if m == nil || m[1] != tc.name {
				t.Fatalf("start output has no ✓ line for %s:\n%s", tc.name, out)
			}
			got, _ := strconv.Atoi(m[2])
			if lines := strings.Count(out, "\n  - "); lines != got {
				t.Errorf("start printed %d tool lines for %d tools:\n%s", lines, got, out)
			}

			ref := countTools(t, npm, tc.env, tc.argv)
			if got != ref || got != tc.want {
				t.Errorf("freecode counted %d tools, the TS SDK client %d, expected %d", got, ref, tc.want)
			}
		})
	}
}

// countTools asks the TypeScript SDK's client how many tools the server lists.
func countTools(t *testing.T, npm string, env, argv []string) int {
	t.Helper()
	// A hang guard only, not a timing bound.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// freecode's MCP client declares no client capabilities (it serves no
	// roots, sampling or elicitation); the reference client declares the same.
	args := []string{filepath.Join("testdata", "count_tools.cjs"), "--capabilities", `{}`}
	for _, kv := range env {
		args = append(args, "--env", kv)
	}
	args = append(append(args, "--"), argv...)
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Env = append(os.Environ(), "FREECODE_NPM="+npm)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("count_tools.cjs: %v\n%s", err, stderr)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("count_tools.cjs printed %q", out)
	}
	return n
}
