package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := Write(path, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("two"), 0o640); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "two" {
		t.Errorf("read %q, %v; want two", data, err)
	}
	if fi, err := os.Stat(path); runtime.GOOS != "windows" && (err != nil || fi.Mode().Perm() != 0o640) {
		t.Errorf("mode %v, %v; want 0640", fi.Mode(), err)
	}
	assertOnly(t, dir, "f.json")
}

// A write that fails midway leaves the old contents and no temporary file.
func TestWriteWithFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := Write(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	err := WriteWith(path, 0o600, func(f *os.File) error {
		f.Write([]byte("half of the n"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WriteWith = %v, want %v", err, boom)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "old" {
		t.Errorf("read %q, %v; want old", data, err)
	}
	assertOnly(t, dir, "f.json")
}

// RemoveStale removes what a writer that died left of path, and nothing
// else, in a directory whose name a glob would misread.
func TestRemoveStale(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a[b]")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "f.json")
	for _, name := range []string{"f.json", ".f.json.tmp123", ".f.json.tmp"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	RemoveStale(path)
	assertOnly(t, dir, "f.json")

	// Another file's temporary file stays.
	other := filepath.Join(dir, ".g.json.tmp1")
	if err := os.WriteFile(other, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	RemoveStale(path)
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another file's temporary file: %v", err)
	}
}

func assertOnly(t *testing.T, dir, name string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != name {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %q, want only %s", names, name)
	}
}
