package sandbox

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/freecode/freecode/config"
)

// Denial kinds.
const (
	DeniedWrite   = "write"
	DeniedRead    = "read"
	DeniedNetwork = "network"
	DeniedSetup   = "setup" // bubblewrap itself could not set the sandbox up
	// The seccomp filter's refusals (seccomp_linux.go).
	DeniedUnixSocket = "unix-socket"
	DeniedNamespace  = "namespace"
)

// Denial is one thing a sandbox refused a server, as its stderr or the
// proxy's log tells, with the change to its entry that would allow it.
type Denial struct {
	Kind string
	What string // the path, the host (host:port on another port), or bwrap's line
	// Fix is the one-line change to the server's entry, as JSON to put in
	// it; "" when there is none short of "sandbox": false.
	Fix string
	Why string // in plain words
}

// String is the denial and its fix in one line.
func (d Denial) String() string {
	if d.Fix == "" {
		return d.Why
	}
	return d.Why + "; to allow it, set in the server's entry: " + d.Fix
}

var (
	// What node, Python, the shell and coreutils say of a refused file.
	fsDenied  = regexp.MustCompile(`(?i)(read-only file system|permission denied|EROFS|EACCES|EPERM)`)
	quoted    = regexp.MustCompile(`['"](/[^'"]+)['"]`)
	barePath  = regexp.MustCompile(`(?:^|[\s:])(/[^\s:'"]+)`)
	dnsFailed = regexp.MustCompile(`(?:EAI_AGAIN|ENOTFOUND|Temporary failure in name resolution|Name or service not known)\s*'?([A-Za-z0-9.-]+\.[A-Za-z]{2,})?`)
	netDown   = regexp.MustCompile(`ENETUNREACH|Network is unreachable|ECONNREFUSED`)
	notFound  = regexp.MustCompile(`(?i)(no such file or directory|ENOENT|Cannot find module|MODULE_NOT_FOUND)`)
	// What bwrap says where it may not make namespaces.
	userns = regexp.MustCompile(`(?i)namespace|uid map|setting up uid|Operation not permitted|Permission denied`)
	// What node (connect EPERM /path), Go (dial unix /path: socket: …)
	// and C programs (socket: Operation not permitted) say when the filter
	// refuses socket(AF_UNIX): in the sandbox an EPERM from socket() is
	// the filter's, whatever the network.
	unixRefused = regexp.MustCompile(`(?i)connect EPERM (/[^\s'"]+)|dial unix (/[^\s:]+): socket: operation not permitted|\bsocket(?:\(\))?: (?:operation not permitted|EPERM)`)
	// What unshare(1), Chromium's and other sandboxes say when the filter
	// refuses them a user namespace (EPERM), or bwrap's --disable-userns
	// does (ENOSPC).
	nsRefused = regexp.MustCompile(`(?i)(?:unshare|namespace|CLONE_NEWUSER)[^\n]*(?:operation not permitted|\bEPERM\b|no space left on device|\bENOSPC\b)`)
)

// privateDirs are the host's directories a sandbox has its own, empty
// copies of: a path there that exists on the host is not found inside.
var privateDirs = []string{"/tmp", "/run/user"}

// Denials reads what the sandbox under p refused a server: from its
// stderr lines (the last ones matter most), and from the proxy's log. Each
// path or host is told once.
func Denials(p Policy, b config.Sandbox, stderr []string, log []Decision) []Denial {
	var out []Denial
	offline := false // a network failure that names no domain, under "none"
	seen := map[string]bool{}
	add := func(d Denial) {
		if !seen[d.Kind+d.What] {
			seen[d.Kind+d.What] = true
			out = append(out, d)
		}
	}
	for _, dec := range log {
		if d, ok := networkDenial(b, dec); ok {
			add(d)
		}
	}
	for _, line := range stderr {
		if rest, ok := strings.CutPrefix(line, "bwrap: "); ok {
			why := "bubblewrap could not set the sandbox up (" + rest + ")"
			if userns.MatchString(rest) {
				why += ": user namespaces may be off or restricted here (sysctl kernel.unprivileged_userns_clone, or AppArmor's kernel.apparmor_restrict_unprivileged_userns on Ubuntu)"
			}
			add(Denial{Kind: DeniedSetup, What: rest, Why: why})
			continue
		}
		// Before the files: node's line says EPERM and a path.
		if m := unixRefused.FindStringSubmatch(line); m != nil {
			if !b.AllowUnixSockets && !p.AllowUnixSockets {
				add(unixSocketDenial(m[1] + m[2]))
			}
			continue
		}
		if nsRefused.MatchString(line) {
			add(Denial{Kind: DeniedNamespace, Why: `the sandbox refused the server a user namespace of its own, which would let it undo the sandbox: run the program it starts without its own sandbox (Chromium: --no-sandbox), or the server unsandboxed ("sandbox": false)`})
			continue
		}
		if fsDenied.MatchString(line) {
			if path := pathIn(line); path != "" {
				add(fsDenial(p, b, path, line))
			}
			continue
		}
		if notFound.MatchString(line) {
			if path := pathIn(line); path != "" && hiddenOnHost(p, path) {
				// There on the host, it was to be read; else made.
				if dir, ok := inPrivateDir(p, path); ok && exists(path) {
					add(privateDenial(b, path, dir))
				} else {
					add(fsDenial(p, b, path, line))
				}
			}
			continue
		}
		if p.Network != config.NetworkAll {
			if m := dnsFailed.FindStringSubmatch(line); m != nil && m[1] != "" {
				d, _ := networkDenial(b, Decision{Host: strings.ToLower(m[1]), Refused: RefusedName})
				add(d)
			} else if m != nil || netDown.MatchString(line) {
				offline = p.Network == config.NetworkNone
			}
		}
	}
	// A failure that names no domain is told only if none named one.
	if offline && !slices.ContainsFunc(out, func(d Denial) bool { return d.Kind == DeniedNetwork }) {
		add(Denial{Kind: DeniedNetwork, Why: `the server has no network ("network": "none")`, Fix: `"sandbox":{"network":{"allowedDomains":["<the domain it needs>"]}}`})
	}
	return out
}

// hiddenOnHost reports whether path, not found in the sandbox under p,
// was hidden by it: in a denyRead path, or there on the host (or its
// directory is) in a directory the sandbox has its own copy of and not
// in one of its writable ones.
func hiddenOnHost(p Policy, path string) bool {
	for _, d := range p.DenyRead {
		if within(path, d) {
			// Root inside (uid 0 of its user namespace) enters the
			// empty directory that hides d, and finds nothing.
			return true
		}
	}
	for _, w := range append([]string{p.Cwd}, p.Writable...) {
		if w != "" && within(path, w) {
			return false
		}
	}
	for _, d := range privateDirs {
		if within(path, d) {
			_, err := os.Stat(path)
			_, errDir := os.Stat(filepath.Dir(path))
			return err == nil || errDir == nil
		}
	}
	return false
}

func pathIn(line string) string {
	if m := quoted.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	if m := barePath.FindStringSubmatch(line); m != nil {
		return strings.TrimRight(m[1], ".,;)")
	}
	return ""
}

// inPrivateDir reports whether path lies in one of the directories the
// sandbox has its own copy of, and not in a path p hides: the directory
// to let the server read is then the path's (its own when a directory).
func inPrivateDir(p Policy, path string) (string, bool) {
	for _, d := range p.DenyRead {
		if within(path, d) {
			return "", false
		}
	}
	for _, d := range privateDirs {
		if within(path, d) {
			dir := path
			if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
				dir = filepath.Dir(path)
			}
			return dir, dir != d
		}
	}
	return "", false
}

// privateDenial is the denial of a path that exists on the host but not in
// the sandbox, whose /tmp and /run/user are its own.
func privateDenial(b config.Sandbox, path, dir string) Denial {
	fix, _ := json.Marshal(map[string]any{"sandbox": map[string]any{"filesystem": map[string]any{"allowRead": append(slices.Clone(b.AllowRead), dir)}}})
	return Denial{Kind: DeniedRead, What: path,
		Why: fmt.Sprintf("the server looked for %s, which is on the host but not in its sandbox: the sandbox has a /tmp and a /run/user of its own", path),
		Fix: strings.TrimSuffix(strings.TrimPrefix(string(fix), "{"), "}")}
}

func fsDenial(p Policy, b config.Sandbox, path, line string) Denial {
	for _, d := range p.DenyRead {
		if within(path, d) {
			if slices.Contains(b.DenyRead, d) {
				return Denial{Kind: DeniedRead, What: path, Why: fmt.Sprintf("the sandbox hid %s from the server (%s is in its denyRead)", path, d),
					Fix: "remove " + strconvQuote(d) + " from sandbox.filesystem.denyRead"}
			}
			return Denial{Kind: DeniedRead, What: path, Why: fmt.Sprintf("the sandbox hid %s from the server: %s is one of the secrets no sandboxed server reads; a server that needs it must run unsandboxed (\"sandbox\": false)", path, d)}
		}
	}
	dir := path
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		dir = filepath.Dir(path)
	}
	w := append(slices.Clone(b.AllowWrite), dir)
	fix, _ := json.Marshal(map[string]any{"sandbox": map[string]any{"filesystem": map[string]any{"allowWrite": w}}})
	return Denial{Kind: DeniedWrite, What: path, Why: fmt.Sprintf("the sandbox kept the server from writing %s (not in its writable paths)", path),
		Fix: strings.TrimSuffix(strings.TrimPrefix(string(fix), "{"), "}")}
}

// networkDenial is the denial of what the proxy refused in dec, with the
// entries that would allow it; false for a decision that refused nothing
// the allow-list could change (allowed, or a name that did not resolve).
func networkDenial(b config.Sandbox, dec Decision) (Denial, bool) {
	_, domains := b.Net()
	if b.Network == config.NetworkNone || b.Network == config.NetworkAll {
		domains = nil
	}
	add := func(e string) {
		if !slices.Contains(domains, e) {
			domains = append(domains, e)
		}
	}
	d := Denial{Kind: DeniedNetwork, What: dec.Host}
	switch dec.Refused {
	case RefusedName:
		d.What = entry(dec.Host, dec.Port)
		d.Why = fmt.Sprintf("the sandbox kept the server from reaching %s (not in its allowedDomains)", d.What)
		add(d.What)
	case RefusedPort:
		d.What = net.JoinHostPort(dec.Host, dec.Port)
		d.Why = fmt.Sprintf("the sandbox kept the server from reaching %s: port %s is not allowed (an allowedDomains entry without a port allows 80 and 443)", dec.Host, dec.Port)
		add(d.What)
	case RefusedAddress:
		// Every address of the name that is not public, since the proxy
		// wants each of them public or listed.
		d.Why = fmt.Sprintf("the sandbox kept the server from reaching %s: it %s, and the sandbox reaches only public addresses unless allowedDomains lists the address", dec.Host, dec.Why)
		for _, a := range dec.Addrs {
			if nonPublic(a) != "" {
				add(entry(a.String(), dec.Port))
			}
		}
	default:
		return Denial{}, false
	}
	fix, _ := json.Marshal(map[string]any{"sandbox": map[string]any{"network": map[string]any{"allowedDomains": domains}}})
	d.Fix = strings.TrimSuffix(strings.TrimPrefix(string(fix), "{"), "}")
	return d, true
}

// unixSocketDenial is the filter's refusal of a unix socket, at path if
// the server's message names it.
func unixSocketDenial(path string) Denial {
	d := Denial{Kind: DeniedUnixSocket, What: path, Fix: `"sandbox":{"allowUnixSockets":true}`,
		Why: "the sandbox refused the server a unix socket (a sandboxed server connects to none, such as D-Bus's or nscd's, unless its entry allows them)"}
	if path != "" {
		d.Why = fmt.Sprintf("the sandbox kept the server from connecting to the unix socket %s (a sandboxed server connects to none unless its entry allows them)", path)
	}
	return d
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
