//go:build !unix

package server

import (
	"io"
	"os"
)

// processAlive reports whether a process of that pid exists. Without a
// cheap way to ask, it says yes for any pid, so that a live sidecar's
// serve.json is never replaced.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

// ownedByUser reports whether the file belongs to this process's user:
// without uids to compare, any file the process can reach counts.
func ownedByUser(os.FileInfo) bool { return true }

// closableReader returns f: a signal ends the process without waiting
// for stdin.
func closableReader(f *os.File) io.ReadCloser { return f }
