package proc

import (
	"runtime"
	"slices"
	"sort"
	"strings"
)

// allowedEnv are the variables of the sidecar's environment a local server
// gets by default. The sidecar's environment holds provider API keys, so a
// server sees only what a command needs to run, plus its own "env".
var allowedEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TZ", "TMPDIR"}

// allowedEnvPrefixes are allowed as whole families.
var allowedEnvPrefixes = []string{"LC_", "XDG_"}

// NetworkEnv are the user's network settings a local server gets by
// default, so that npx, pip or uv in it goes out the way the user's shell
// does: through the proxy, to the registry, trusting the CA. Every name is
// whole, as written here: no family, since npm's and pip's own families
// also hold tokens (npm_config__authToken, npm_config_//host/:_authToken,
// NPM_TOKEN, PIP_INDEX_URL's neighbours), and none of those is passed.
// The values may hold a proxy's or an index's user name and password:
// package mcp hides those wherever a server's output is shown.
var NetworkEnv = []string{
	// Proxies, in both cases: curl, Python, Go and npm read the lower
	// case; Node 24's NODE_USE_ENV_PROXY makes its fetch honour them.
	"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
	"NO_PROXY", "no_proxy", "NODE_USE_ENV_PROXY",
	// Certificate authorities.
	"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "PIP_CERT",
	// Package indexes.
	"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "UV_EXTRA_INDEX_URL",
}

// npmNetworkKeys are npm's network settings, passed as npm_config_<key>,
// and its cache, where what it fetched is kept (a user who keeps it
// elsewhere would otherwise have npx fetch everything again; a sandbox
// sets its own). npm reads its variables' names ignoring case, so these
// are matched ignoring case too (NPM_CONFIG_REGISTRY is the registry as
// well).
var npmNetworkKeys = []string{"registry", "proxy", "https_proxy", "noproxy", "cafile", "ca", "strict_ssl", "cache"}

const npmPrefix = "npm_config_"

// IsNetworkEnv reports whether the variable name is one of the user's
// network settings that Env passes (NetworkEnv, npm's npmNetworkKeys).
func IsNetworkEnv(name string) bool {
	return isNetworkEnv(name, runtime.GOOS)
}

func isNetworkEnv(name, goos string) bool {
	if len(name) > len(npmPrefix) && strings.EqualFold(name[:len(npmPrefix)], npmPrefix) {
		return slices.Contains(npmNetworkKeys, strings.ToLower(name[len(npmPrefix):]))
	}
	if goos == "windows" {
		return slices.ContainsFunc(NetworkEnv, func(n string) bool { return strings.EqualFold(n, name) })
	}
	return slices.Contains(NetworkEnv, name)
}

// windowsEnv are the system variables node, npx and cmd.exe need on Windows.
var windowsEnv = []string{
	"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP",
	"USERPROFILE", "USERNAME", "USERDOMAIN", "APPDATA", "LOCALAPPDATA", "PROGRAMDATA",
	"PROGRAMFILES", "PROGRAMFILES(X86)", "PROGRAMW6432", "COMMONPROGRAMFILES",
	"HOMEDRIVE", "HOMEPATH", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "OS",
}

func envAllowed(name, goos string) bool {
	if isNetworkEnv(name, goos) {
		return true
	}
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
// os.Environ form): the allow-list and the user's network settings
// (NetworkEnv), or all of it with inherit, then the server's own variables
// on top. The result is sorted, so it is stable.
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
	for name := range own {
		if isNetworkEnv(name, goos) {
			// The entry's network setting wins in whichever case a tool
			// reads it (curl takes https_proxy before HTTPS_PROXY): the
			// sidecar's, in any case, is left out.
			for n := range vars {
				if strings.EqualFold(n, name) {
					delete(vars, n)
				}
			}
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
