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
