//go:build unix

package config

import (
	"os"
	"path/filepath"
	"testing"
)

// A managed file is the user's to undo when it or its directory is
// theirs (root's are not: root owns every real policy) or writable by
// everyone.
func TestUserWritable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "freecode")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ManagedSettingsName)
	if err := os.WriteFile(path, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	owned := os.Getuid() != 0 // the test made them: they are the user's, unless the user is root
	if got := userWritable(path, dir); got != owned {
		t.Errorf("userWritable(0644 in 0755) = %v, want %v", got, owned)
	}
	if err := os.Chmod(path, 0o646); err != nil {
		t.Fatal(err)
	}
	if !userWritable(path, dir) {
		t.Error("userWritable(world-writable file) = false")
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o757); err != nil {
		t.Fatal(err)
	}
	if !userWritable(path, dir) {
		t.Error("userWritable(in a world-writable directory) = false")
	}
	m := mustLoadManaged(t, filepath.Dir(path))
	if len(m.Files) != 1 || !m.Files[0].UserWritable {
		t.Errorf("loadManaged: files %+v, want one the user can write", m.Files)
	}
}
