package proc

import (
	"runtime"
	"sort"
	"strings"
)

// allowedEnv are the variables of the sidecar's environment a local server
// gets by default. The sidecar's environment holds provider API keys, so a
// server sees only what a command needs to run, plus its own "env".
var allowedEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TZ", "TMPDIR"}

// allowedEnvPrefixes are allowed as whole families.
var allowedEnvPrefixes = []string{"LC_", "XDG_"}

// windowsEnv are the system variables node, npx and cmd.exe need on Windows.
var windowsEnv = []string{
	"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP",
	"USERPROFILE", "USERNAME", "USERDOMAIN", "APPDATA", "LOCALAPPDATA", "PROGRAMDATA",
	"PROGRAMFILES", "PROGRAMFILES(X86)", "PROGRAMW6432", "COMMONPROGRAMFILES",
	"HOMEDRIVE", "HOMEPATH", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "OS",
}

func envAllowed(name, goos string) bool {
	if goos == "windows" {
		name = strings.ToUpper(name) // Windows variable names ignore case
		for _, w := range windowsEnv {
			if name == w {
				return true
			}
		}
	}
	for _, a := range allowedEnv {
		if name == a {
			return true
		}
	}
	for _, p := range allowedEnvPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Env builds a local server's environment from this process's (base, in
// os.Environ form): the allow-list, or all of it with inherit, then the
// server's own variables on top. The result is sorted, so it is stable.
func Env(base []string, own map[string]string, inherit bool) []string {
	return envFor(base, own, inherit, runtime.GOOS)
}

func envFor(base []string, own map[string]string, inherit bool, goos string) []string {
	vars := make(map[string]string, len(base)+len(own))
	for _, kv := range base {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if inherit || envAllowed(name, goos) {
			vars[name] = value
		}
	}
	for name, value := range own {
		vars[name] = value
	}
	out := make([]string, 0, len(vars))
	for name, value := range vars {
		out = append(out, name+"="+value)
	}
	sort.Strings(out)
	return out
}
