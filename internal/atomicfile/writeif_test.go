package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// stamp reads path as a writer does before an edit.
func stamp(t *testing.T, path string) Stamp {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return Stamp{}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return StampOf(fi, data)
}

// editorSave saves data to path as editors do: a new file renamed over it.
func editorSave(t *testing.T, path, data string) {
	t.Helper()
	tmp := path + "~"
	if err := os.WriteFile(tmp, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func canSwap(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no swap of two files on", runtime.GOOS)
	}
}

// TestWriteIf: a write over the file that was read replaces it; a write
// over a file another program saved since, at any moment before the
// replacement, changes nothing and says so, and leaves no temporary file.
func TestWriteIf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		exists  bool
		hook    *func()
		inPlace bool
		swap    bool // needs a system that swaps files
	}{
		{name: "unchanged", exists: true},
		{name: "new file", exists: false},
		{name: "saved before the check", exists: true, hook: &testHookBeforeCheck},
		{name: "saved in place before the check, time kept", exists: true, hook: &testHookBeforeCheck, inPlace: true},
		{name: "created before the check", exists: false, hook: &testHookBeforeCheck},
		{name: "saved after the check", exists: true, hook: &testHookBeforeReplace, swap: true},
		{name: "created after the check", exists: false, hook: &testHookBeforeReplace, swap: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.swap {
				canSwap(t)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "f.json")
			if tc.exists {
				if err := os.WriteFile(path, []byte(`{"a": 1}`), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			was := stamp(t, path)
			want := `{"a": 2}`
			if tc.hook != nil {
				*tc.hook = func() {
					if !tc.inPlace {
						editorSave(t, path, `{"b": 1}`)
						return
					}
					// The same size and time: only the contents tell.
					fi, err := os.Stat(path)
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(`{"b": 1}`), 0o600); err != nil {
						t.Fatal(err)
					}
					if err := os.Chtimes(path, time.Time{}, fi.ModTime()); err != nil {
						t.Fatal(err)
					}
				}
				defer func() { *tc.hook = nil }()
				want = `{"b": 1}`
			}
			err := WriteIf(path, []byte(`{"a": 2}`), 0o600, was)
			if tc.hook != nil && !errors.Is(err, ErrChanged) || tc.hook == nil && err != nil {
				t.Errorf("WriteIf = %v", err)
			}
			if got, err := os.ReadFile(path); err != nil || string(got) != want {
				t.Errorf("the file holds %q (%v), want %q", got, err, want)
			}
			assertOnly(t, dir, "f.json")
		})
	}
}

// TestPutBack: a swap that took out a save made after the check puts it
// back; if a newer save went in meanwhile, that one is what stays.
func TestPutBack(t *testing.T) {
	canSwap(t)
	for _, newer := range []bool{false, true} {
		dir := t.TempDir()
		path, tmp := filepath.Join(dir, "f.json"), filepath.Join(dir, ".f.json.tmp1")
		if err := os.WriteFile(path, []byte("theirs"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(tmp, []byte("ours"), 0o600); err != nil {
			t.Fatal(err)
		}
		ours, err := os.Stat(tmp)
		if err != nil {
			t.Fatal(err)
		}
		// The swap: ours in place, theirs out.
		if err := exchange(tmp, path); err != nil {
			t.Fatal(err)
		}
		want := "theirs"
		if newer {
			editorSave(t, path, "newer")
			want = "newer"
		}
		keep, err := putBack(tmp, path, ours)
		if keep || !errors.Is(err, ErrChanged) {
			t.Errorf("newer %v: putBack = %v, %v; want ErrChanged", newer, keep, err)
		}
		if got, _ := os.ReadFile(path); string(got) != want {
			t.Errorf("newer %v: the file holds %q, want %q", newer, got, want)
		}
	}
}
