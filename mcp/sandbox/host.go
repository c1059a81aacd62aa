package sandbox

import (
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Host is the user a sandbox guards: who runs FreeCode, learned from the
// user database and FreeCode's own environment, and the files FreeCode
// keeps for them. Nothing in it comes from a server's entry: an entry that
// sets HOME or npm_config_cache changes what its server is told, never
// what the sandbox hides or lets it write.
type Host struct {
	// Homes are the user's home directories: the one the user database
	// gives (getpwuid), and $HOME of FreeCode's own environment where it
	// differs. Each has its secrets hidden (DefaultDenyRead, Credentials).
	Homes []string
	// NPMCache is the user's npm cache: npm_config_cache of FreeCode's
	// environment, else .npm in its $HOME (in the user database's home
	// when there is no $HOME). It is writable in every sandbox, so that
	// npx can install what it runs.
	NPMCache string
	// Own are FreeCode's own files wherever they are (Guard): the config
	// file in use, the sidecar's socket. Each is hidden.
	Own []string
}

// HostOf returns the Host of the user running this process, with environ
// as FreeCode's own environment (os.Environ if nil). FreeCode passes nil
// everywhere, so that the approval's text and the sandbox it runs are of
// one user.
func HostOf(environ []string) Host {
	if environ == nil {
		environ = os.Environ()
	}
	var h Host
	if u, err := user.LookupId(strconv.Itoa(os.Getuid())); err == nil && u.HomeDir != "" {
		h.Homes = append(h.Homes, filepath.Clean(u.HomeDir))
	}
	home := envLookup(environ, "HOME")
	if home != "" && filepath.IsAbs(home) && !slices.Contains(h.Homes, filepath.Clean(home)) {
		h.Homes = append(h.Homes, filepath.Clean(home))
	}
	switch c := envLookup(environ, "npm_config_cache"); {
	case c != "" && filepath.IsAbs(c):
		h.NPMCache = filepath.Clean(c)
	case home != "" && filepath.IsAbs(home):
		h.NPMCache = filepath.Join(home, ".npm")
	case len(h.Homes) > 0:
		h.NPMCache = filepath.Join(h.Homes[0], ".npm")
	}
	h.Own = guarded()
	return h
}

// envLookup is the value of key in environ, the last one winning as in
// exec; npm's variables are matched without regard to case, as npm does.
func envLookup(environ []string, key string) string {
	v := ""
	for _, kv := range environ {
		k, val, ok := strings.Cut(kv, "=")
		if ok && (k == key || strings.HasPrefix(key, "npm_config_") && strings.EqualFold(k, key)) {
			v = val
		}
	}
	return v
}

var (
	guardMu sync.Mutex
	guard   []string
)

// Guard adds paths to FreeCode's own files, which no sandbox this process
// starts from now on may read: the config file in use and the auth
// directory beside it, the sidecar's socket and serve.json. What lies in
// ~/.freecode is hidden already (DefaultDenyRead); Guard covers a config
// file named by --config or $FREECODE_CONFIG elsewhere, and a socket
// anywhere. It is process-wide on purpose: every way into a sandboxed
// start (the sidecar, the CLI's one-shot commands, the gateway) hides the
// same files, and none can forget to pass them.
func Guard(paths ...string) {
	guardMu.Lock()
	defer guardMu.Unlock()
	for _, p := range paths {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil && !slices.Contains(guard, abs) {
			guard = append(guard, abs)
		}
	}
}

// GuardConfig guards the config file at path and what FreeCode keeps
// beside it: the user's rules (settings.json), the directory auth/ and
// serve.json.
func GuardConfig(path string) {
	if path == "" {
		return
	}
	dir := filepath.Dir(path)
	Guard(path, filepath.Join(dir, "settings.json"), filepath.Join(dir, "auth"), filepath.Join(dir, "serve.json"))
}

func guarded() []string {
	guardMu.Lock()
	defer guardMu.Unlock()
	return slices.Clone(guard)
}
