package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/defscache"
)

var (
	benchVerbs = []string{"list", "get", "create", "update", "delete", "search", "read", "write", "move", "copy",
		"archive", "restore", "merge", "close", "open", "lock", "unlock", "tag", "export", "import"}
	benchNouns = []string{"issue", "pull_request", "branch", "commit", "file", "directory", "user", "team", "project",
		"milestone", "label", "comment", "review", "release", "workflow", "job", "artifact", "secret", "webhook",
		"page", "database", "table", "row", "record", "ticket", "channel", "message", "thread", "event", "calendar",
		"invoice", "customer", "order", "product", "payment", "subscription", "deployment", "cluster", "node", "pod",
		"volume", "bucket", "object", "queue", "topic", "alert", "incident", "dashboard", "metric", "log"}
	benchQualifiers = []string{"", "", "", "_by_id", "_batch", "_v2", "_details", "_history", "_status", "_permissions"}
)

// benchTools returns servers×perServer realistic MCP tools: verb_noun
// names, a sentence or two of description, three to six arguments with
// their own descriptions.
func benchTools(servers, perServer int) map[string][]*mcpsdk.Tool {
	r := rand.New(rand.NewPCG(1, 2))
	out := make(map[string][]*mcpsdk.Tool, servers)
	for s := range servers {
		server := fmt.Sprintf("svc%02d", s)
		seen := map[string]bool{}
		for len(out[server]) < perServer {
			verb := benchVerbs[r.IntN(len(benchVerbs))]
			noun := benchNouns[r.IntN(len(benchNouns))]
			name := verb + "_" + noun + benchQualifiers[r.IntN(len(benchQualifiers))]
			if seen[name] {
				continue
			}
			seen[name] = true
			words := strings.ReplaceAll(noun, "_", " ")
			desc := fmt.Sprintf("%s a %s in %s. Use it when the user asks to %s %ss; it returns the %s as JSON with its id, name, owner and timestamps.",
				strings.ToUpper(verb[:1])+verb[1:], words, server, verb, words, words)
			props := map[string]any{}
			required := []string{}
			for i := range 3 + r.IntN(4) {
				p := fmt.Sprintf("%s_%s", benchNouns[r.IntN(len(benchNouns))], []string{"id", "name", "filter", "limit", "cursor", "owner"}[i%6])
				props[p] = map[string]any{"type": []string{"string", "integer", "boolean"}[i%3], "description": fmt.Sprintf("The %s to %s, as the service names it.", strings.ReplaceAll(p, "_", " "), verb)}
				if i == 0 {
					required = append(required, p)
				}
			}
			schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false})
			out[server] = append(out[server], &mcpsdk.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema)})
		}
	}
	return out
}

// benchRegistry registers benchTools.
func benchRegistry(servers, perServer int) *Registry {
	reg := NewRegistry(nil)
	c := newFakeRunner()
	for server, tools := range benchTools(servers, perServer) {
		reg.SetServerTools(server, tools, c)
	}
	return reg
}

// benchQueries are what a model asks tool_search for.
var benchQueries = []string{
	"create an issue", "list pull requests", "delete branch", "search messages in a channel", "read file",
	"export dashboard metrics", "restore deleted record", "lock database table", "update customer subscription",
	"get deployment status", "archive old tickets", "merge release branch", "copy object to bucket",
	"close incident alert", "write log", "svc17 invoices", "webhook permissions", "calendar event history",
}

// BenchmarkToolSearch ranks 5,000 tools (50 servers × 100) for a model's
// queries. Each op is one search; it reports the p50 and p99 of a search
// measured one by one, and, as the peer in the same run, a plain
// case-insensitive substring scan of every tool's name and description (the
// cheapest search there is, and the ranking this one is not).
func BenchmarkToolSearch(b *testing.B) {
	reg := benchRegistry(50, 100)
	s := NewToolSearch(reg, nil)
	s.Search("warm up", 5) // the index is built once, not per search
	tools := reg.Tools("")
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		s.Search(benchQueries[i%len(benchQueries)], 5)
		i++
	}
	b.StopTimer()

	const samples = 2000
	lat := make([]time.Duration, 0, samples)
	var sub time.Duration
	for j := range samples {
		q := benchQueries[j%len(benchQueries)]
		start := time.Now()
		s.Search(q, 5)
		lat = append(lat, time.Since(start))
		start = time.Now()
		substringSearch(tools, q, 5)
		sub += time.Since(start)
	}
	slices.Sort(lat)
	var total time.Duration
	for _, d := range lat {
		total += d
	}
	p := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(p(0.5), "p50-µs")
	b.ReportMetric(p(0.99), "p99-µs")
	b.ReportMetric(float64(sub.Microseconds())/samples, "substring-µs")
	b.ReportMetric(float64(total)/float64(sub), "bm25/substring")

	start := time.Now()
	s.Invalidate()
	s.Search("rebuild", 5)
	b.ReportMetric(float64(time.Since(start).Microseconds()), "index-build-µs")
}

// substringSearch is the peer: tools whose name or description holds the
// whole query, in registry order.
func substringSearch(tools []*Tool, query string, limit int) []*Tool {
	q := strings.ToLower(query)
	var out []*Tool
	for _, t := range tools {
		if strings.Contains(strings.ToLower(t.ID), q) || strings.Contains(strings.ToLower(t.Description), q) {
			out = append(out, t)
			if len(out) == limit {
				break
			}
		}
	}
	return out
}

// BenchmarkDeferredDefs builds the provider arrays of 50 servers × 100
// tools, with every MCP tool deferred and with none, and reports each
// one's size in estimated tokens (defscache.EstimateTokens) and bytes.
// Each op is one build of the deferred array.
func BenchmarkDeferredDefs(b *testing.B) {
	reg := benchRegistry(50, 100)
	search := NewToolSearch(reg, nil)
	if err := reg.RegisterBuiltin(search.Tool()); err != nil {
		b.Fatal(err)
	}
	deferAll := func(t *Tool) bool { return t.Server != "" }
	for _, f := range defscache.Formats() {
		b.Run(string(f), func(b *testing.B) {
			deferred := defscache.New(DefsSource(reg, &DefsOptions{Deferred: deferAll}), nil)
			full := defscache.New(DefsSource(reg, nil), nil)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				deferred.Invalidate()
				if _, err := deferred.Get(ctx, f); err != nil {
					b.Fatal(err)
				}
			}
			e, err := deferred.Get(ctx, f)
			if err != nil {
				b.Fatal(err)
			}
			all, err := full.Get(ctx, f)
			if err != nil {
				b.Fatal(err)
			}
			if e.FullSize != len(all.Bytes) {
				b.Fatalf("the deferred entry's full size %d is not the full array's %d", e.FullSize, len(all.Bytes))
			}
			b.ReportMetric(float64(e.Tokens()), "deferred-tokens")
			b.ReportMetric(float64(all.Tokens()), "full-tokens")
			b.ReportMetric(float64(len(e.Bytes)), "deferred-bytes")
			b.ReportMetric(float64(len(all.Bytes)), "full-bytes")
			b.ReportMetric(float64(all.Tokens())/float64(e.Tokens()), "full/deferred")
		})
	}
}
