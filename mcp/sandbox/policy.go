// Package sandbox confines a local MCP server: what it may read and write
// of the filesystem, and what it may reach of the network.
//
// A Policy is resolved from the entry's config.Sandbox (Resolve): the
// system read-only; the server's working directory, npm's cache and a
// private /tmp writable, and the paths the entry adds; a list of secrets
// unreadable (DefaultDenyRead and the entry's); and one of three
// networks: none, all, or the domains of an allow-list, reached through a
// filtering HTTP proxy of this package (Proxy) that is the sandbox's only
// way out and logs every decision.
//
// Prepare turns a server's command line into the one that runs it in the
// policy's sandbox: on Linux under bubblewrap (bwrap.go), in new user,
// mount, pid, network, IPC and UTS namespaces, and on macOS under
// sandbox-exec with a Seatbelt profile (seatbelt.go, untested on a Mac).
// With an allow-list on Linux the sandbox's network namespace has only its
// own loopback: this package's bridge (bridge.go), the FreeCode binary
// itself run as the sandbox's first process, listens there and carries
// each connection over a unix socket to the proxy outside.
//
// Denials reads what a server that failed wrote to stderr, and the
// proxy's log, for the paths and domains the sandbox refused, and says
// the one change to the entry that would allow each.
package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/freecode/freecode/config"
)

// DefaultDenyRead are the paths under the home directory that no
// sandboxed server may read: keys and tokens of the usual tools, and
// FreeCode's own directory (its config holds provider keys, auth/ its
// sign-ins).
var DefaultDenyRead = []string{
	".ssh", ".aws", ".freecode", ".gnupg", ".config/gcloud", ".azure", ".kube",
	".docker", ".netrc", ".config/gh", ".password-store",
}

// Policy is a resolved sandbox: absolute paths that exist, and a network.
type Policy struct {
	Cwd      string   // the server's working directory, writable
	Writable []string // the other writable directories
	DenyRead []string // unreadable: directories hidden, files read as empty
	Network  string   // config.NetworkNone, NetworkAll or NetworkDomains
	Domains  []string // with NetworkDomains: host names, or "*." and one
	// AllowUnixSockets leaves the server socket(AF_UNIX), which the
	// seccomp filter refuses otherwise (seccomp_linux.go).
	AllowUnixSockets bool
}

// Resolve makes the Policy of sandbox b for a server started in cwd, by a
// user whose home is home, with npm's cache in npmCache ("" if none is
// known; it is created if missing, so that npx can write it). A path of
// allowWrite that does not exist is an error; one of denyRead that does
// not exist is left out, since there is nothing to hide.
func Resolve(b config.Sandbox, home, cwd, npmCache string) (Policy, error) {
	p := Policy{Cwd: filepath.Clean(cwd)}
	p.Network, p.Domains = b.Net()
	p.AllowUnixSockets = b.AllowUnixSockets
	if npmCache != "" {
		if err := os.MkdirAll(npmCache, 0o755); err != nil {
			return Policy{}, fmt.Errorf("sandbox: npm's cache %s: %w", npmCache, err)
		}
		p.Writable = append(p.Writable, filepath.Clean(npmCache))
	}
	for _, w := range b.AllowWrite {
		fi, err := os.Stat(w)
		if err != nil {
			return Policy{}, fmt.Errorf("sandbox: allowWrite %s: %w", w, err)
		}
		if !fi.IsDir() {
			return Policy{}, fmt.Errorf("sandbox: allowWrite %s is not a directory", w)
		}
		p.Writable = append(p.Writable, filepath.Clean(w))
	}
	var deny []string
	if home != "" {
		for _, d := range DefaultDenyRead {
			deny = append(deny, filepath.Join(home, d))
		}
	}
	deny = append(deny, b.DenyRead...)
	for _, d := range deny {
		if _, err := os.Lstat(d); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if !slices.Contains(p.DenyRead, d) {
			p.DenyRead = append(p.DenyRead, filepath.Clean(d))
		}
	}
	return p, nil
}

// Describe says in a line what a server in p may do, as the approval of
// a project server shows it.
func (p Policy) Describe() string {
	var b strings.Builder
	b.WriteString("sandboxed: system read-only; writes ")
	b.WriteString(strings.Join(append([]string{p.Cwd, "a private /tmp"}, p.Writable...), ", "))
	if len(p.DenyRead) > 0 {
		b.WriteString("; cannot read ")
		b.WriteString(strings.Join(p.DenyRead, ", "))
	}
	switch p.Network {
	case config.NetworkNone:
		b.WriteString("; no network")
	case config.NetworkAll:
		b.WriteString("; the whole network")
	default:
		if len(p.Domains) == 0 {
			b.WriteString("; no network")
		} else {
			b.WriteString("; network only to ")
			b.WriteString(strings.Join(p.Domains, ", "))
		}
	}
	if p.AllowUnixSockets {
		b.WriteString("; may connect to unix sockets")
	}
	return b.String()
}

// DescribeServer says in a line what sandbox the entry srv gets, for its
// approval: "not sandboxed" for an entry that opts out, else the policy
// it would run under as far as the entry tells (its cwd; the home
// directory as ~ and npm's default cache; the paths are not checked).
func DescribeServer(srv config.Server) string {
	if !srv.Sandboxed() {
		return "not sandboxed: it runs with all of your rights"
	}
	b := srv.SandboxOf()
	p := Policy{Cwd: srv.Cwd, Writable: []string{"~/.npm"}}
	if p.Cwd == "" {
		p.Cwd = "the working directory"
	}
	for _, d := range DefaultDenyRead {
		p.DenyRead = append(p.DenyRead, filepath.Join("~", d))
	}
	p.DenyRead = append(p.DenyRead, b.DenyRead...)
	p.Writable = append(p.Writable, b.AllowWrite...)
	p.Network, p.Domains = b.Net()
	p.AllowUnixSockets = b.AllowUnixSockets
	return p.Describe()
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	if path == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(path, dir)
}
