package orchestrator

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStructuredContentCap: structuredContent is capped like text, on its
// own: when its canonical JSON is over the cap it is replaced by a note
// and saved whole; under the cap it passes unchanged.
func TestStructuredContentCap(t *testing.T) {
	big := map[string]any{"rows": []any{"a", "b", strings.Repeat("c", 40)}, "<n>": 1.5} // 71 characters of JSON
	const bigJSON = `{"<n>":1.5,"rows":["a","b","cccccccccccccccccccccccccccccccccccccccc"]}`
	small := map[string]any{"ok": true}
	tests := []struct {
		name           string
		text           string
		structured     any
		wantStructured any
		wantTruncated  *Truncated // SavedTo: "txt" or "json", the file it names
		wantNotes      []string
	}{
		{name: "both under the cap", text: "hello", structured: small, wantStructured: small},
		{name: "structured over the cap", text: "hello", structured: big,
			wantTruncated: &Truncated{ShownChars: 5, TotalChars: 5 + len(bigJSON), SavedTo: "json"},
			wantNotes:     []string{"[structuredContent omitted: its JSON is 71 characters, over the cap of 50; the whole of it was saved to "}},
		{name: "text over the cap, structured under", text: strings.Repeat("t", 60), structured: small, wantStructured: small,
			wantTruncated: &Truncated{ShownChars: 50 + 11, TotalChars: 60 + 11, SavedTo: "txt"},
			wantNotes:     []string{"[result truncated: showing 50 of 60 characters, 10 cut; the whole result was saved to "}},
		{name: "both over the cap", text: strings.Repeat("t", 60), structured: big,
			wantTruncated: &Truncated{ShownChars: 50, TotalChars: 60 + len(bigJSON), SavedTo: "txt"},
			wantNotes: []string{"[result truncated: showing 50 of 60 characters, 10 cut; the whole result was saved to ",
				"[structuredContent omitted: its JSON is 71 characters, over the cap of 50; the whole of it was saved to "}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fc := newFakeRunner()
			reg := NewRegistry(nil)
			reg.SetServerTools("demo", []*mcpsdk.Tool{tool("q", true, "")}, fc)
			fc.handle("q", func(context.Context, map[string]any, func(Progress)) (*mcpsdk.CallToolResult, error) {
				return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: tc.text}}, StructuredContent: tc.structured}, nil
			})
			dir := t.TempDir()
			r := New(reg, &Options{MaxResultChars: 50, ResultsDir: dir}).Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__q"}}, nil)[0]
			mustNotError(t, r)
			if diff := cmp.Diff(tc.wantStructured, r.StructuredContent); diff != "" {
				t.Errorf("structuredContent (-want +got):\n%s", diff)
			}
			var notes []string
			for _, c := range r.Content[1:] {
				notes = append(notes, c.(*mcpsdk.TextContent).Text)
			}
			if len(notes) != len(tc.wantNotes) {
				t.Fatalf("notes = %q, want %d", notes, len(tc.wantNotes))
			}
			for i, w := range tc.wantNotes {
				if !strings.HasPrefix(notes[i], w) {
					t.Errorf("note %d = %q, want it to start with %q", i, notes[i], w)
				}
			}
			if tc.wantTruncated == nil {
				if r.Truncated != nil {
					t.Errorf("truncated = %+v, want nil", r.Truncated)
				}
				return
			}
			if r.Truncated == nil {
				t.Fatal("truncated = nil")
			}
			want := *tc.wantTruncated
			if filepath.Ext(r.Truncated.SavedTo) != "."+want.SavedTo || filepath.Dir(r.Truncated.SavedTo) != dir {
				t.Errorf("savedTo = %q, want a .%s file in %s", r.Truncated.SavedTo, want.SavedTo, dir)
			}
			want.SavedTo = r.Truncated.SavedTo
			if diff := cmp.Diff(want, *r.Truncated); diff != "" {
				t.Errorf("truncated (-want +got):\n%s", diff)
			}
			if tc.structured != nil && r.StructuredContent == nil {
				files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
				if len(files) != 1 {
					t.Fatalf("saved JSON files: %q", files)
				}
				data, err := os.ReadFile(files[0])
				if err != nil || string(data) != bigJSON || !json.Valid(data) {
					t.Errorf("saved %s (%v), want %s", data, err, bigJSON)
				}
				if !strings.Contains(notes[len(notes)-1], files[0]) {
					t.Errorf("the note does not name %s", files[0])
				}
			}
		})
	}
}

// writeSaved writes a file named like a saved result, modified at mod.
func writeSaved(t *testing.T, dir, name string, size int, mod time.Time) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(strings.Repeat("x", size)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mod, mod); err != nil {
		t.Fatal(err)
	}
	return path
}

func savedName(prefix string) string {
	return prefix + "-" + strings.Repeat("0", 31) + prefix[len(prefix)-1:] + ".txt"
}

// TestCleanResults: files older than the age bound go, then the oldest
// until the rest fit the size bound; files not named like saved results
// stay, whatever their age.
func TestCleanResults(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	writeSaved(t, dir, savedName("old1"), 10, now.Add(-8*24*time.Hour))
	writeSaved(t, dir, savedName("a2"), 40, now.Add(-3*time.Hour))
	writeSaved(t, dir, savedName("b3"), 40, now.Add(-2*time.Hour))
	writeSaved(t, dir, savedName("c4"), 40, now.Add(-1*time.Hour))
	writeSaved(t, dir, "notes.txt", 1000, now.Add(-30*24*time.Hour))
	writeSaved(t, dir, "call-"+strings.Repeat("0", 32)+".log", 10, now.Add(-30*24*time.Hour))
	if err := os.Mkdir(filepath.Join(dir, savedName("d5")), 0o700); err != nil {
		t.Fatal(err)
	}
	n, err := cleanResults(dir, now, 7*24*time.Hour, 100)
	if err != nil || n != 2 {
		t.Errorf("cleanResults = %d, %v; want 2 removed", n, err)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{savedName("b3"), savedName("c4"), "call-" + strings.Repeat("0", 32) + ".log", savedName("d5"), "notes.txt"}
	slices.Sort(want)
	if diff := cmp.Diff(want, left); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}

	if n, err := CleanResults(filepath.Join(dir, "never-made")); n != 0 || err != nil {
		t.Errorf("CleanResults of a missing directory = %d, %v", n, err)
	}
}

// TestSaveCleansHourly: saving a result cleans its directory, at most once
// an hour.
func TestSaveCleansHourly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := newFakeRunner()
		reg := NewRegistry(nil)
		reg.SetServerTools("demo", []*mcpsdk.Tool{tool("big", true, "")}, fc)
		fc.handle("big", func(context.Context, map[string]any, func(Progress)) (*mcpsdk.CallToolResult, error) {
			return textResult(strings.Repeat("x", 20)), nil
		})
		dir := t.TempDir()
		o := New(reg, &Options{MaxResultChars: 10, ResultsDir: dir})
		call := []ToolCall{{CallID: "1", Tool: "mcp__demo__big"}}
		old := func(name string) string {
			return writeSaved(t, dir, savedName(name), 1, time.Now().Add(-30*24*time.Hour))
		}
		exists := func(path string) bool { _, err := os.Stat(path); return err == nil }

		first := old("first1")
		o.Execute(t.Context(), call, nil)
		if exists(first) {
			t.Error("the first save did not clean")
		}
		second := old("second2")
		time.Sleep(59 * time.Minute)
		o.Execute(t.Context(), call, nil)
		if !exists(second) {
			t.Error("a save within the hour cleaned again")
		}
		time.Sleep(time.Minute)
		o.Execute(t.Context(), call, nil)
		if exists(second) {
			t.Error("a save an hour later did not clean")
		}
		if files, _ := filepath.Glob(filepath.Join(dir, "1-*.txt")); len(files) != 3 {
			t.Errorf("saved results = %q, want the 3 just saved", files)
		}
	})
}
