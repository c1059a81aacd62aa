package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/internal/toolrecall"
)

// The catalog mode (mcpServerEnv "catalog") serves one LiveMCPBench
// server's tools, as its tools/list returned them: catalogDirEnv names
// the data's directory, catalogEnv the server's key in it.
const (
	catalogDirEnv = "FREECODE_BENCH_CATALOG_DIR"
	catalogEnv    = "FREECODE_BENCH_CATALOG"
)

// serveCatalog is the test binary as one of LiveMCPBench's servers. Its
// tools only say that they are stand-ins: the benchmark searches them and
// never calls them.
func serveCatalog() int {
	b, err := toolrecall.Load(os.Getenv(catalogDirEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench catalog:", err)
		return 1
	}
	key := os.Getenv(catalogEnv)
	for _, srv := range b.Servers {
		if srv.Key != key {
			continue
		}
		s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: srv.Key, Version: "0.1.0"}, nil)
		for _, t := range srv.Tools {
			s.AddTool(&mcpsdk.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema},
				func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
					return &mcpsdk.CallToolResult{IsError: true, Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "a benchmark stand-in"}}}, nil
				})
		}
		if err := s.Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "bench catalog:", err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(os.Stderr, "bench catalog: no server %q\n", key)
	return 2
}

// recallLimit is how many tools each search asks for: recall@10 needs ten.
const recallLimit = 10

// BenchmarkToolSearchRecall measures what tool_search finds, the way a
// model uses it: LiveMCPBench's 70 servers each a stdio MCP server of its
// own (this test binary in catalog mode), connected to the built
// freecode-serve with mcp.deferTools true, and one tool_search per task
// through freecode/tools/execute, the task's question as the query. It
// reports hit@1 and hit@5 (a tool the annotator used among the first 1 or
// 5) and recall@5 and recall@10 (the share of those tools among the first
// 5 or 10), on all 94 tasks that name a tool some server has, on the even
// ones (what the ranking was tuned on) and the odd ones (held out); beside
// them, in the same run, textbook Okapi BM25 over each tool's id and
// description (toolrecall.BM25). Each op is one tool_search call; its p50
// and p99 are reported too.
func BenchmarkToolSearchRecall(b *testing.B) {
	bench, err := toolrecall.LoadDefault()
	if err != nil {
		b.Fatal(err)
	}
	dir, err := toolrecall.DataDir()
	if err != nil {
		b.Fatal(err)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		b.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	var servers []entry
	var names []string
	for _, s := range bench.Servers {
		servers = append(servers, entry{Name: s.Name, Type: "local", Command: []string{exe}, Timeout: 60000,
			Env: map[string]string{mcpServerEnv: "catalog", catalogDirEnv: dir, catalogEnv: s.Key}})
		names = append(names, s.Name)
	}
	data, err := json.Marshal(map[string]any{"mcp": map[string]any{"deferTools": true, "servers": servers}})
	if err != nil {
		b.Fatal(err)
	}
	cfg := filepath.Join(b.TempDir(), "config.json")
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		b.Fatal(err)
	}
	sc := startSidecar(b, cfg)
	defer sc.stop(b)
	sc.awaitConnected(b, names)

	// The tools as the sidecar registered them: each id's name on its
	// server, which is what the annotations name.
	infos, err := sc.Tools(b.Context(), "")
	if err != nil {
		b.Fatal(err)
	}
	nameOf := make(map[string]string)
	var ids, texts []string
	for _, t := range infos {
		if t.Server == "" {
			continue
		}
		nameOf[t.ID] = t.Name
		ids = append(ids, t.ID)
		texts = append(texts, t.ID+" "+t.Description)
	}
	if len(ids) != 527 {
		b.Fatalf("the sidecar registered %d MCP tools, want LiveMCPBench's 527", len(ids))
	}
	defs, err := sc.Definitions(b.Context(), "anthropic")
	if err != nil {
		b.Fatal(err)
	}
	var sent []struct{ Name string }
	if err := json.Unmarshal(defs.Tools, &sent); err != nil || len(sent) != 1 || sent[0].Name != "tool_search" {
		b.Fatalf("the provider array holds %v (%v), want tool_search alone: the tools are not deferred", sent, err)
	}

	search := func(query string) ([]string, time.Duration) {
		args, _ := json.Marshal(map[string]any{"query": query, "limit": recallLimit})
		start := time.Now()
		res, err := sc.Execute(b.Context(), protocol.ToolCall{CallID: "s", Tool: "tool_search", Arguments: args})
		d := time.Since(start)
		if err != nil || len(res) != 1 || res[0].IsError {
			b.Fatalf("tool_search %q: %v %+v", query, err, res)
		}
		var found struct {
			Tools []struct{ Name, ID string }
		}
		if err := json.Unmarshal(res[0].StructuredContent, &found); err != nil {
			b.Fatalf("tool_search %q: structured content %s: %v", query, res[0].StructuredContent, err)
		}
		var out []string
		for _, t := range found.Tools {
			id := t.ID
			if id == "" {
				id = t.Name
			}
			name, ok := nameOf[id]
			if !ok {
				b.Fatalf("tool_search %q returned %q, no tool of the benchmark", query, id)
			}
			out = append(out, name)
		}
		return out, d
	}

	tasks := bench.Tasks
	b.ResetTimer()
	i := 0
	for b.Loop() {
		search(tasks[i%len(tasks)].Question)
		i++
	}
	b.StopTimer()

	ranked := make([][]string, len(tasks))
	lat := make([]time.Duration, len(tasks))
	for i, t := range tasks {
		ranked[i], lat[i] = search(t.Question)
	}
	bm := toolrecall.NewBM25(texts)
	baseline := make([][]string, len(tasks))
	for i, t := range tasks {
		for _, d := range bm.Search(t.Question, recallLimit) {
			baseline[i] = append(baseline[i], nameOf[ids[d]])
		}
	}
	ours, base := toolrecall.ScoreSplit(tasks, ranked), toolrecall.ScoreSplit(tasks, baseline)
	reportScores(b, "", ours.All)
	reportScores(b, "even-", ours.Even)
	reportScores(b, "odd-", ours.Odd)
	reportScores(b, "bm25-", base.All)
	reportScores(b, "bm25-even-", base.Even)
	reportScores(b, "bm25-odd-", base.Odd)
	report(b, "µs", samples{"search", lat})
	b.Logf("tool_search through the sidecar, %d tasks:\n  all   %v\n  even  %v\n  odd   %v\ntextbook BM25 over id + description:\n  all   %v\n  even  %v\n  odd   %v",
		len(tasks), ours.All, ours.Even, ours.Odd, base.All, base.Even, base.Odd)
}

// reportScores reports s's four figures, their names prefixed.
func reportScores(b *testing.B, prefix string, s toolrecall.Scores) {
	b.ReportMetric(s.Hit1, prefix+"hit@1")
	b.ReportMetric(s.Hit5, prefix+"hit@5")
	b.ReportMetric(s.Recall5, prefix+"recall@5")
	b.ReportMetric(s.Recall10, prefix+"recall@10")
}
