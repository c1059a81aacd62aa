//go:build !windows

package mcp

import "io/fs"

// isExecutable reports whether someone may execute the file.
func isExecutable(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o111 != 0 }

// commandNames are the file names argv0 may have on the PATH.
func commandNames(argv0 string) []string { return []string{argv0} }
