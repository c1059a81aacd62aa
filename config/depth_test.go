package config

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// deepFile is a config whose mcp value nests n arrays, on its second line.
func deepFile(n int) []byte {
	return []byte("{\n  \"mcp\": " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n}\n")
}

// TestDeepNestingIsReportedAtItsPosition checks that every reader of a
// config file says where the nesting goes too deep, rather than "the file
// must hold a JSON object" at 1:1 after hundreds of megabytes.
func TestDeepNestingIsReportedAtItsPosition(t *testing.T) {
	data := deepFile(100_000)
	// The root object is level 1, so the bracket past the bound is the
	// MaxDepth-th '['; the first is at column 10 of line 2.
	wantLine, wantCol := 2, 10+MaxDepth-1
	readers := []struct {
		name string
		read func(t *testing.T, path string) error
	}{
		{"Parse", func(t *testing.T, path string) error { _, err := Parse(path, data); return err }},
		{"UpdateFile", func(t *testing.T, path string) error {
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			return SetEnabled(path, "x", false)
		}},
		{"Import", func(t *testing.T, path string) error { _, _, err := Import(ImportCursor, data); return err }},
	}
	for _, r := range readers {
		t.Run(r.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := r.read(t, path)
			runtime.ReadMemStats(&after)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error = %v; want a *ParseError", err)
			}
			if pe.Line != wantLine || pe.Col != wantCol || !strings.Contains(pe.Msg, "nest deeper than 1000") {
				t.Errorf("error = %v; want %d:%d: … nest deeper than %d …", err, wantLine, wantCol, MaxDepth)
			}
			// The parse of this file used to allocate 22 MB on the heap
			// (and ten times that in stack, which TotalAlloc does not
			// count); the scan allocates next to nothing. Reading the file
			// costs its size.
			if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
				t.Errorf("reading a %d-byte file allocated %d bytes; want under 4 MiB", len(data), got)
			}
		})
	}
}

// TestDepthBoundCountsOnlyBrackets checks that brackets in strings and
// comments do not count, and that a file at the bound parses.
func TestDepthBoundCountsOnlyBrackets(t *testing.T) {
	deepText := strings.Repeat("[{", MaxDepth)
	for _, tc := range []struct {
		name string
		data string
	}{
		{"in a string", `{"other": "` + deepText + `\"` + deepText + `"}`},
		{"in a line comment", "{ // " + deepText + "\n}"},
		{"in a block comment", "{ /* " + deepText + " */ }"},
		{"at the bound", "{\"other\": " + strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1) + "}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse("config.json", []byte(tc.data)); err != nil {
				t.Errorf("Parse: %v", err)
			}
		})
	}
	if _, err := Parse("config.json", []byte("{\"other\": "+strings.Repeat("[", MaxDepth)+strings.Repeat("]", MaxDepth)+"}")); err == nil {
		t.Errorf("Parse of a file one level past the bound: no error")
	}
}

// BenchmarkParseDeep reports what a config nested 100,000 levels deep
// costs to read (-benchmem: bytes allocated per parse).
func BenchmarkParseDeep(b *testing.B) {
	data := deepFile(100_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("config.json", data); err == nil {
			b.Fatal("no error")
		}
	}
}
