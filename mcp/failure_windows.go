package mcp

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// isExecutable reports whether the file may be run: on Windows, any file
// found by its extension.
func isExecutable(fs.FileInfo) bool { return true }

// commandNames are the file names argv0 may have on the PATH: as given if
// it has an extension, else with each of PATHEXT's.
func commandNames(argv0 string) []string {
	if filepath.Ext(argv0) != "" {
		return []string{argv0}
	}
	exts := os.Getenv("PATHEXT")
	if exts == "" {
		exts = ".com;.exe;.bat;.cmd"
	}
	var out []string
	for e := range strings.SplitSeq(exts, ";") {
		if e != "" {
			out = append(out, argv0+strings.ToLower(e))
		}
	}
	return out
}
