package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/freecode/freecode/orchestrator"
)

// `tools defs` with deferred tools sends tool_search alone and reports, per
// format, the tokens sent and the tokens the array would take without
// deferral: the array of the same tools undeferred, plus tool_search.
func TestToolsDefsDeferred(t *testing.T) {
	dir := t.TempDir()
	write := func(name, mcp string) string {
		path := filepath.Join(dir, name)
		cfg := fmt.Sprintf(`{"mcp": {"servers": [{"name": "demo", "type": "local", "command": [%q]}]%s}}`, demoServer, mcp)
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	deferred, plain := write("deferred.json", `, "deferTools": true`), write("plain.json", "")
	project := t.TempDir()
	lineRe := regexp.MustCompile(`(?m)^  (anthropic|openai): (\d+) sent(?:, (\d+) without deferral \((\d+) tools deferred\)|, no tool deferred)$`)
	report := func(path string) (stdout string, sent, full map[string]int, count map[string]string) {
		out, errOut, code := run(t, "--config", path, "tools", "--project", project, "defs")
		if code != 0 {
			t.Fatalf("defs: exit %d\n%s", code, errOut)
		}
		sent, full, count = map[string]int{}, map[string]int{}, map[string]string{}
		for _, m := range lineRe.FindAllStringSubmatch(errOut, -1) {
			sent[m[1]], _ = strconv.Atoi(m[2])
			full[m[1]], _ = strconv.Atoi(m[3])
			count[m[1]] = m[4]
		}
		if len(sent) != 2 {
			t.Fatalf("no token report per format:\n%s", errOut)
		}
		return out, sent, full, count
	}
	out, dSent, dFull, dCount := report(deferred)
	var defs []struct{ Name string }
	if err := json.Unmarshal([]byte(out), &defs); err != nil || len(defs) != 1 || defs[0].Name != "tool_search" {
		t.Fatalf("deferred array: %v %s", err, out)
	}
	_, pSent, pFull, pCount := report(plain)
	for _, f := range []string{"anthropic", "openai"} {
		if dCount[f] != "7" || pCount[f] != "" || pFull[f] != 0 {
			t.Errorf("%s: deferred counts %q and %q, full %d", f, dCount[f], pCount[f], pFull[f])
		}
		// Rounding each estimate up may put them one apart.
		if d := dFull[f] - (pSent[f] + dSent[f]); d < -1 || d > 1 {
			t.Errorf("%s: %d without deferral, but the plain array is %d and tool_search %d", f, dFull[f], pSent[f], dSent[f])
		}
	}
}

// `tools call tool_search` starts the servers whose deferred tools it
// searches, as the sidecar has them running: it finds the demo server's
// delete_file, and nothing for words no tool has.
func TestToolsCallToolSearch(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	cfg := fmt.Sprintf(`{"mcp": {"deferTools": true, "servers": [{"name": "demo", "type": "local", "command": [%q]}]}}`, demoServer)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	search := func(query string) orchestrator.SearchResult {
		t.Helper()
		args, err := json.Marshal(map[string]any{"query": query})
		if err != nil {
			t.Fatal(err)
		}
		out := mustRun(t, "--config", path, "tools", "--project", dir, "call", orchestrator.ToolSearchName, "--args", string(args), "--json")
		var res struct {
			StructuredContent orchestrator.SearchResult `json:"structuredContent"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("tool_search %q: %v\n%s", query, err, out)
		}
		return res.StructuredContent
	}
	res := search("delete file")
	if len(res.Tools) == 0 || res.Tools[0].Name != "mcp__demo__delete_file" || res.Tools[0].Server != "demo" {
		t.Errorf("tool_search \"delete file\" found %+v, want mcp__demo__delete_file first", res.Tools)
	}
	if res := search("zebra quaternion"); len(res.Tools) != 0 {
		t.Errorf("tool_search for words no tool has found %+v", res.Tools)
	}
}
