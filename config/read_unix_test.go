//go:build unix

package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A cloned repository ships its settings file as a FIFO, a link to
// /dev/zero or a huge file: loading it must fail at once, never block or
// fill memory, and the user's own config goes through the same reader.
func TestLoadProjectRefusesOddFiles(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{"fifo", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		}, "not a regular file"},
		{"link to /dev/zero", func(t *testing.T, path string) {
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"too large", func(t *testing.T, path string) {
			big := `{"mcp": {"servers": []}, "pad": "` + strings.Repeat("x", MaxFileBytes) + `"}`
			if err := os.WriteFile(path, []byte(big), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "larger than 4 MiB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, ".freecode"), 0o700); err != nil {
				t.Fatal(err)
			}
			path := ProjectSettingsPath(dir)
			tc.make(t, path)
			if _, err := LoadProject(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("LoadProject: %v, want an error saying %q", err, tc.want)
			}
			if _, err := Load(path); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
