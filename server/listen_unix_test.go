//go:build unix

package server

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestListenUnixBornPrivate: the socket is the user's alone the moment it
// exists, before Listen's chmod, whatever the process's umask.
func TestListenUnixBornPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	sock := filepath.Join(t.TempDir(), "sock")
	ln, err := listenUnix(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		t.Errorf("socket mode right after listening: %v, want no group or other access", perm)
	}
	if got := syscall.Umask(0o022); got != 0o022 {
		t.Errorf("umask after listening: %#o, want it restored (0o022)", got)
	}
}
