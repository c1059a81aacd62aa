package config

import (
	"os"
	"runtime"
	"strings"
)

// ManagedDir returns the system directory of the managed settings:
// /etc/freecode on Linux and the other Unix systems,
// /Library/Application Support/FreeCode on macOS, and
// %ProgramData%\FreeCode on Windows (C:\ProgramData\FreeCode if the
// system does not say where ProgramData is). Only the system decides
// it: no flag, FreeCode environment variable or config key moves it, or
// a user could point FreeCode at a policy of their own.
func ManagedDir() string { return managedDir() }

// managedDir is ManagedDir's answer. Tests of this package point it at a
// temporary directory; nothing outside the package can.
var managedDir = func() string { return managedDirFor(runtime.GOOS, os.Getenv) }

// managedDirFor is the managed directory on goos, with getenv for
// Windows's ProgramData (the system's own variable, not FreeCode's).
func managedDirFor(goos string, getenv func(string) string) string {
	switch goos {
	case "darwin", "ios":
		return "/Library/Application Support/FreeCode"
	case "windows":
		pd := strings.TrimRight(getenv("ProgramData"), `\/`)
		// Only an absolute drive path: a relative or UNC value would
		// put the policy where the current directory or a share says.
		if len(pd) < 3 || !isLetter(pd[0]) || pd[1] != ':' || pd[2] != '\\' && pd[2] != '/' {
			pd = `C:\ProgramData`
		}
		return pd + `\FreeCode`
	default:
		return "/etc/freecode"
	}
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
