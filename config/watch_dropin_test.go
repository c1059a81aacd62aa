package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWatchDropInDirectory follows a drop-in directory: a file added,
// edited in place and removed, and the directory made after the watch
// started, by file events and by polling.
func TestWatchDropInDirectory(t *testing.T) {
	for _, poll := range []bool{false, true} {
		name := "events"
		if poll {
			name = "poll"
		}
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "managed-settings.d")
			opts := WatchOptions{Debounce: 10e6, DropIns: []string{dir}}
			if poll {
				opts.ForcePoll, opts.PollInterval = true, 20e6
			}
			_, ch := watch(t, []string{dir}, opts)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			write := func(name, data string) {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// A directory made, empty: exists, no files.
			if c := one(t, next(t, ch)); !c.Exists || len(c.Data) != 0 {
				t.Fatalf("directory made: %+v", c)
			}
			write("20-b.json", `{"b": 1}`)
			if c := one(t, next(t, ch)); !strings.Contains(string(c.Data), "20-b.json\x00{\"b\": 1}\x00") {
				t.Fatalf("file added: %q", c.Data)
			}
			write("10-a.json", `{"a": 1}`)
			c := one(t, next(t, ch))
			if a, b := strings.Index(string(c.Data), "10-a.json"), strings.Index(string(c.Data), "20-b.json"); a < 0 || b < a {
				t.Fatalf("drop-ins not in name order: %q", c.Data)
			}
			write("10-a.json", `{"a": 22}`) // in place: the directory's own time does not change
			if c := one(t, next(t, ch)); !strings.Contains(string(c.Data), `{"a": 22}`) {
				t.Fatalf("file edited: %q", c.Data)
			}
			write(".hidden.json", `{}`)
			write("notes.txt", `x`)
			if err := os.Remove(filepath.Join(dir, "20-b.json")); err != nil {
				t.Fatal(err)
			}
			c = one(t, next(t, ch))
			if strings.Contains(string(c.Data), "20-b") || strings.Contains(string(c.Data), "hidden") || strings.Contains(string(c.Data), "notes") {
				t.Fatalf("after removal: %q", c.Data)
			}
		})
	}
}
