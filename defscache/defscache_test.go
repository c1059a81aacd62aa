package defscache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// sampleDefs is a small tool set given deliberately out of order.
func sampleDefs() []Def {
	return []Def{
		{Name: "mcp__memory__read_graph", Description: "Read the entire knowledge graph", Server: "memory", Tool: "read_graph",
			Schema: json.RawMessage(`{"type":"object","properties":{}}`)},
		{Name: "mcp__demo__create_issue", Description: "Create an issue <with> \"labels\"", Server: "demo", Tool: "create_issue",
			Schema: json.RawMessage(`{
				"type": "object",
				"required": ["title"],
				"properties": {"title": {"type": "string"}, "labels": {"type": "array", "items": {"type": "string"}}}
			}`)},
		{Name: "write", Description: "Write a file", Builtin: true, Order: 2,
			Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)},
		{Name: "read", Description: "Read a file", Builtin: true, Order: 1,
			Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "mcp__demo__a_tool", Description: "", Server: "demo", Tool: "a_tool",
			Schema: json.RawMessage(`{"type":"object","properties":{}}`)},
	}
}

func TestSort(t *testing.T) {
	defs := sampleDefs()
	Sort(defs)
	var got []string
	for _, d := range defs {
		got = append(got, d.Name)
	}
	want := []string{"read", "write", "mcp__demo__a_tool", "mcp__demo__create_issue", "mcp__memory__read_graph"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}

	// Where sorting by name would differ: built-ins whose Order is not
	// their name order, servers "a" and "a-b" ("-" sorts before "_", so
	// by name mcp__a-b__… would come first), and an alias whose name does
	// not sort like its tool.
	defs = []Def{
		{Name: "mcp__a-b__a", Server: "a-b", Tool: "a"},
		{Name: "mcp__a__zzz_0badcafe", Server: "a", Tool: "zzz.long"},
		{Name: "mcp__a__y", Server: "a", Tool: "y"},
		{Name: "alpha", Builtin: true, Order: 2},
		{Name: "zed", Builtin: true, Order: 1},
	}
	Sort(defs)
	got = nil
	for _, d := range defs {
		got = append(got, d.Name)
	}
	want = []string{"zed", "alpha", "mcp__a__y", "mcp__a__zzz_0badcafe", "mcp__a-b__a"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order by Order, server, tool (-want +got):\n%s", diff)
	}
}

// TestEncodeGolden pins the exact bytes of each format.
func TestEncodeGolden(t *testing.T) {
	for _, f := range Formats() {
		t.Run(string(f), func(t *testing.T) {
			got, err := Encode(f, sampleDefs())
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(got) {
				t.Fatalf("Encode gave invalid JSON: %s", got)
			}
			golden := filepath.Join("testdata", string(f)+".golden.json")
			if *update {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(strings.TrimSuffix(string(want), "\n"), string(got)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	schema := json.RawMessage(`{"type":"object"}`)
	tests := []struct {
		name string
		f    Format
		defs []Def
		want string
	}{
		{"unknown format", "gemini", nil, "unknown tool definition format"},
		{"empty name", FormatAnthropic, []Def{{Schema: schema}}, "want 1 to 64 characters"},
		{"long name", FormatAnthropic, []Def{{Name: strings.Repeat("a", 65), Schema: schema}}, "want 1 to 64 characters"},
		{"bad character", FormatOpenAI, []Def{{Name: "a.b", Schema: schema}}, `character '.'`},
		{"duplicate", FormatAnthropic, []Def{{Name: "a", Schema: schema}, {Name: "a", Schema: schema}}, "appears twice"},
		{"no schema", FormatAnthropic, []Def{{Name: "a"}}, "has no schema"},
		{"bad schema", FormatAnthropic, []Def{{Name: "a", Schema: json.RawMessage(`{"type":`)}}, "invalid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Encode(tc.f, tc.defs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Encode error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// source is a Source over a settable tool set that counts its builds.
type source struct {
	mu   sync.Mutex
	defs []Def
	err  error

	builds atomic.Int64
	// block, when set, is received from before each build returns.
	block chan struct{}
}

func (s *source) set(defs []Def) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.defs = defs
}

func (s *source) get(ctx context.Context, f Format) ([]Def, error) {
	s.builds.Add(1)
	s.mu.Lock()
	defs, err, block := s.defs, s.err, s.block
	s.mu.Unlock()
	if block != nil {
		<-block
	}
	return defs, err
}

func TestHashStability(t *testing.T) {
	ctx := context.Background()
	src := &source{defs: sampleDefs()}
	c := New(src.get, nil)

	changed, first, err := c.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !changed {
		t.Error("first Refresh: changed = false, want true")
	}
	e, err := c.Get(ctx, FormatAnthropic)
	if err != nil {
		t.Fatal(err)
	}
	if e.Count != 5 || e.Format != FormatAnthropic || e.Hash != first[FormatAnthropic] {
		t.Errorf("entry = %+v, want 5 anthropic tools with hash %s", e, first[FormatAnthropic])
	}

	// A reconnect with the same tools, listed in another order and with the
	// schema's keys reordered and respaced: same bytes, same hashes.
	same := sampleDefs()
	same[0], same[4] = same[4], same[0]
	same[1].Schema = json.RawMessage(`{"properties":{"labels":{"items":{"type":"string"},"type":"array"},"title":{"type":"string"}},"required":["title"],"type":"object"}`)
	src.set(same)
	c.Invalidate()
	changed, again, err := c.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if changed {
		t.Error("Refresh after a rebuild with equal tools: changed = true, want false")
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("hashes after an equal rebuild (-want +got):\n%s", diff)
	}
	if got := src.builds.Load(); got != 4 {
		t.Errorf("source called %d times, want 4 (two formats, two builds)", got)
	}

	// A real change: one description.
	changedDefs := sampleDefs()
	changedDefs[3].Description = "Read a file, better"
	src.set(changedDefs)
	c.Invalidate()
	changed, third, err := c.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !changed {
		t.Error("Refresh after a real change: changed = false, want true")
	}
	for _, f := range Formats() {
		if third[f] == first[f] {
			t.Errorf("%s hash unchanged after a real change", f)
		}
	}

	// No Invalidate, no rebuild, no change.
	before := src.builds.Load()
	if changed, _, err := c.Refresh(ctx); err != nil || changed {
		t.Errorf("Refresh without a change = %v, %v; want false, nil", changed, err)
	}
	if got := src.builds.Load(); got != before {
		t.Errorf("Refresh without Invalidate rebuilt (%d builds, want %d)", got, before)
	}
}

func TestErrorsAreNotCached(t *testing.T) {
	ctx := context.Background()
	src := &source{err: errors.New("registry closed")}
	c := New(src.get, nil)
	if _, err := c.Get(ctx, FormatOpenAI); err == nil || !strings.Contains(err.Error(), "registry closed") {
		t.Fatalf("Get error = %v, want the source's error", err)
	}
	if _, _, err := c.Refresh(ctx); err == nil {
		t.Fatal("Refresh succeeded with a failing source")
	}
	src.mu.Lock()
	src.err, src.defs = nil, sampleDefs()
	src.mu.Unlock()
	e, err := c.Get(ctx, FormatOpenAI)
	if err != nil || e.Count != 5 {
		t.Fatalf("Get after the source recovered = %+v, %v", e, err)
	}
	if _, err := c.Get(ctx, "gemini"); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("Get(gemini) error = %v, want ErrUnknownFormat", err)
	}
	only := New(src.get, &Options{Formats: []Format{FormatAnthropic}})
	if _, err := only.Get(ctx, FormatOpenAI); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("Get of a format left out of Options = %v, want ErrUnknownFormat", err)
	}
}

// TestSingleflight: concurrent misses for one format share one build.
func TestSingleflight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		src := &source{defs: sampleDefs(), block: release}
		c := New(src.get, nil)
		const n = 50
		entries := make([]*Entry, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				e, err := c.Get(t.Context(), FormatAnthropic)
				if err != nil {
					t.Error(err)
				}
				entries[i] = e
			})
		}
		synctest.Wait() // every Get is waiting on the one build
		close(release)
		wg.Wait()
		if got := src.builds.Load(); got != 1 {
			t.Errorf("%d concurrent Gets ran %d builds, want 1", n, got)
		}
		for i, e := range entries {
			if e != entries[0] {
				t.Fatalf("Get %d returned a different entry", i)
			}
		}
		if e, _ := c.Get(t.Context(), FormatAnthropic); e != entries[0] || src.builds.Load() != 1 {
			t.Error("a later Get did not hit the cache")
		}
	})
}

// TestInvalidateDuringBuild: a build that an Invalidate overtook is not
// cached, and a Get that came after the Invalidate does not receive it.
func TestInvalidateDuringBuild(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		src := &source{defs: sampleDefs(), block: release}
		c := New(src.get, nil)

		var old *Entry
		done := make(chan struct{})
		go func() {
			defer close(done)
			var err error
			if old, err = c.Get(t.Context(), FormatAnthropic); err != nil {
				t.Error(err)
			}
		}()
		synctest.Wait() // the old build is running

		newDefs := sampleDefs()[:2]
		src.mu.Lock()
		src.defs = newDefs
		src.mu.Unlock()
		c.Invalidate()

		var fresh *Entry
		freshDone := make(chan struct{})
		go func() {
			defer close(freshDone)
			var err error
			if fresh, err = c.Get(t.Context(), FormatAnthropic); err != nil {
				t.Error(err)
			}
		}()
		synctest.Wait() // the fresh Get has joined the old build
		release <- struct{}{}
		<-done
		if old == nil || old.Count != 5 {
			t.Fatalf("Get that started before Invalidate = %+v, want the 5-tool build", old)
		}
		synctest.Wait() // the fresh Get started a build of its own
		release <- struct{}{}
		<-freshDone
		if fresh == nil || fresh.Count != 2 {
			t.Fatalf("Get that started after Invalidate = %+v, want the 2-tool build", fresh)
		}
		close(release)
		if got, _ := c.Get(t.Context(), FormatAnthropic); got != fresh {
			t.Errorf("cached entry = %+v, want the fresh build", got)
		}
		if got := src.builds.Load(); got != 2 {
			t.Errorf("%d builds, want 2", got)
		}
	})
}

// TestConcurrentGetInvalidate hammers Get, Invalidate and Refresh together
// (for -race): every entry is self-consistent, and once the churn stops the
// cache serves the final tool set.
func TestConcurrentGetInvalidate(t *testing.T) {
	src := &source{defs: sampleDefs()}
	c := New(src.get, nil)
	ctx := t.Context()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for range 200 {
				e, err := c.Get(ctx, Formats()[i%2])
				if err != nil {
					t.Error(err)
					return
				}
				sum := sha256.Sum256(e.Bytes)
				if hex.EncodeToString(sum[:]) != e.Hash || (e.Count != 5 && e.Count != 3) {
					t.Errorf("inconsistent entry: %d tools, hash %s", e.Count, e.Hash)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 100 {
			if i%2 == 0 {
				src.set(sampleDefs()[:3])
			} else {
				src.set(sampleDefs())
			}
			c.Invalidate()
			if _, _, err := c.Refresh(ctx); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	src.set(sampleDefs()[:3])
	c.Invalidate()
	for _, f := range Formats() {
		e, err := c.Get(ctx, f)
		if err != nil || e.Count != 3 {
			t.Errorf("after the churn, Get(%s) = %+v, %v; want the final 3 tools", f, e, err)
		}
	}
}

func TestGetCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		src := &source{defs: sampleDefs(), block: release}
		c := New(src.get, nil)
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error)
		go func() {
			_, err := c.Get(ctx, FormatOpenAI)
			errc <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("Get error = %v, want context.Canceled", err)
		}
		close(release) // the build still completes and is cached
		synctest.Wait()
		if e, err := c.Get(t.Context(), FormatOpenAI); err != nil || e.Count != 5 || src.builds.Load() != 1 {
			t.Errorf("Get after a cancelled one = %+v, %v after %d builds; want the cached build", e, err, src.builds.Load())
		}
	})
}

// manyDefs is n MCP tools shaped like server-memory's, each a little different.
func manyDefs(n int) []Def {
	defs := make([]Def, n)
	for i := range defs {
		server := fmt.Sprintf("server%02d", i%20)
		tool := fmt.Sprintf("tool_%04d", i)
		defs[i] = Def{
			Name:        "mcp__" + server + "__" + tool,
			Description: "Create multiple new entities in the knowledge graph, number " + tool,
			Server:      server,
			Tool:        tool,
			Schema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"entities":{"type":"array","items":{"type":"object",
				"properties":{"name":{"type":"string","description":"The name of the entity %d"},"entityType":{"type":"string","description":"The type of the entity"},
				"observations":{"type":"array","items":{"type":"string"},"description":"An array of observation contents associated with the entity"}},
				"required":["name","entityType","observations"]}}},"required":["entities"]}`, i)),
		}
	}
	return defs
}

func BenchmarkGetHit(b *testing.B) {
	src := &source{defs: manyDefs(2000)}
	c := New(src.get, nil)
	ctx := context.Background()
	if _, err := c.Get(ctx, FormatAnthropic); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Get(ctx, FormatAnthropic); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRebuild(b *testing.B) {
	src := &source{defs: manyDefs(2000)}
	c := New(src.get, nil)
	ctx := context.Background()
	var size int
	b.ReportAllocs()
	for b.Loop() {
		c.Invalidate()
		e, err := c.Get(ctx, FormatAnthropic)
		if err != nil {
			b.Fatal(err)
		}
		size = len(e.Bytes)
	}
	b.ReportMetric(float64(size), "bytes/array")
}
