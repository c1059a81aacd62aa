// Package sandbox confines a local MCP server: what it may read and write
// of the filesystem, and what it may reach of the network.
//
// A Policy is resolved once from the entry's config.Sandbox and the Host,
// the user FreeCode runs as (Resolve, PolicyOf): the system read-only; the
// server's working directory, the user's npm cache and a private /tmp
// writable, and the paths the entry adds; inside those, the files that
// run later (Protected: git hooks, editor and FreeCode settings, shell
// start-up files) never writable; the user's secrets and FreeCode's own
// files unreadable; and one of three networks: none, all, or the domains
// of an allow-list, reached through a filtering HTTP proxy of this package
// (Proxy) that is the sandbox's only way out and logs every decision.
// Every path is resolved (symbolic links followed) before it is bound,
// described or hashed. What the approval of a project server shows
// (Policy.Describe) and what runs (Prepare) are made from that one value.
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
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/freecode/freecode/config"
)

// DefaultDenyRead are the paths under each home directory that no
// sandboxed server may read: keys and tokens of the usual tools, and
// FreeCode's own directory (its config holds provider keys, auth/ its
// sign-ins). Credentials adds the files developers' tools keep secrets in.
var DefaultDenyRead = []string{
	".ssh", ".aws", ".freecode", ".gnupg", ".config/gcloud", ".azure", ".kube",
	".docker", ".netrc", ".config/gh", ".password-store",
}

// Credentials are the other paths under each home directory a sandboxed
// server may not read: registry and forge tokens, cloud and database
// passwords, shell and REPL histories (a typed secret stays there), and
// browser profiles. ~/.npmrc is given as a copy without its tokens
// (see Policy.Masked), since npm reads its registry settings there.
var Credentials = []string{
	// npm, yarn, git, PyPI, Cargo, Maven, Gradle, Vault, Terraform.
	".npmrc", ".yarnrc", ".yarnrc.yml", ".git-credentials", ".config/git/credentials",
	".pypirc", ".config/pip", ".cargo/credentials", ".cargo/credentials.toml",
	".m2/settings.xml", ".m2/settings-security.xml", ".gradle/gradle.properties",
	".vault-token", ".terraform.d/credentials.tfrc.json",
	// Other clouds', forges' and databases' tools.
	".config/hub", ".config/op", ".config/rclone", ".config/doctl", ".config/hcloud", ".oci",
	".s3cfg", ".boto", ".pgpass", ".my.cnf", ".local/share/keyrings",
	// Shell and REPL histories.
	".bash_history", ".zsh_history", ".zhistory", ".history", ".sh_history",
	".local/share/fish/fish_history", ".python_history", ".node_repl_history",
	".psql_history", ".mysql_history", ".sqlite_history", ".lesshst", ".viminfo",
	// Browsers and editors, whose profiles hold sessions.
	".mozilla", ".config/google-chrome", ".config/chromium", ".config/Code",
}

// Protected are the paths, relative to each writable directory, that run
// later outside any sandbox (git's hooks and config, editors' tasks,
// FreeCode's and other hosts' settings and servers, npm's settings, shell
// start-up files and .gitconfig, in a home directory): a sandboxed server
// may never write them, even where it may write the directory they are in.
// One that does not exist yet cannot be created either (see protect.go).
// No entry can loosen this list.
var Protected = []string{
	".git/hooks", ".git/config", ".git/modules", ".gitmodules",
	".freecode", ".vscode", ".idea", ".claude", ".cursor", ".mcp.json", ".npmrc",
	".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zshenv", ".zprofile",
	".gitconfig",
}

// homeOnly are the names of Protected that run later only in a home
// directory: elsewhere they are ordinary files.
var homeOnly = map[string]bool{
	".bashrc": true, ".bash_profile": true, ".bash_login": true, ".profile": true,
	".zshrc": true, ".zshenv": true, ".zprofile": true, ".gitconfig": true,
}

// Policy is a resolved sandbox: real paths (symbolic links resolved), and
// a network. It is the one value the approval's text, the status and the
// sandbox's command line are all made from.
type Policy struct {
	Cwd      string // the server's working directory, writable
	NPMCache string // npm's cache, writable: the user's own, or the entry's inside a writable path
	// Writable are the other writable directories: NPMCache (unless it is
	// inside another) and the entry's allowWrite.
	Writable []string
	// ReadOnly are host paths bound read-only where the sandbox has its
	// own empty directory (/tmp, /run/user): the server's own program and
	// package, which would otherwise vanish, and the entry's allowRead.
	ReadOnly []string
	// Protected are the paths inside the writable directories that are
	// never writable (the Protected list under each of them); those that
	// do not exist are kept from being created (see protect.go).
	Protected []string
	// Sealed are the writable directories that are home directories:
	// what is in them is writable, but nothing can be added at their top
	// or taken away, since a new ~/.bash_profile or ~/.gitconfig would
	// run later (and a placeholder for each would change what the user's
	// shell reads).
	Sealed []string
	// DenyRead are unreadable: directories hidden, files read as empty.
	DenyRead []string
	// Masked are hidden files the server reads a copy of, stripped of
	// credentials: ~/.npmrc without its tokens.
	Masked  []string
	Network string   // config.NetworkNone, NetworkAll or NetworkDomains
	Domains []string // with NetworkDomains: allowedDomains entries (config.ParseAllowedDomain)
	// AllowUnixSockets leaves the server socket(AF_UNIX), which the
	// seccomp filter refuses otherwise (seccomp_linux.go).
	AllowUnixSockets bool
	// Home is the user's home as the user database gives it, for
	// Describe's "~"; "" if unknown.
	Home string
}

// PolicyOf resolves the sandbox of the local server srv for the user h:
// its cwd (FreeCode's own when the entry has none), its command and its
// entry's environment are the entry's.
func PolicyOf(srv config.Server, h Host) (Policy, error) {
	cwd := srv.Cwd
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return Policy{}, fmt.Errorf("sandbox: the working directory: %w", err)
		}
	}
	var env []string
	for k, v := range srv.Env {
		env = append(env, k+"="+v)
	}
	return Resolve(srv.SandboxOf(), h, cwd, srv.Command, env)
}

// Resolve makes the Policy of sandbox b for a server started in cwd with
// command argv by the user h; env is what the entry sets of the server's
// environment, of which only npm_config_cache counts, and only when it
// lies inside a writable path (Prepare creates the npm cache if it is
// missing, so that npx can write it). A cwd or allowWrite path that does not exist is
// an error; a denyRead path that does not exist is left out, since there
// is nothing to hide.
func Resolve(b config.Sandbox, h Host, cwd string, argv, env []string) (Policy, error) {
	var p Policy
	if len(h.Homes) > 0 {
		p.Home = h.Homes[0]
	}
	var err error
	homes := make([]string, 0, len(h.Homes))
	for _, home := range h.Homes {
		if r, err := config.ResolvePath(home); err == nil {
			homes = append(homes, r)
		}
	}
	if p.Cwd, err = realDir(cwd); err != nil {
		return Policy{}, fmt.Errorf("sandbox: the working directory %s: %w", cwd, err)
	}
	p.Network, p.Domains = b.Net()
	p.AllowUnixSockets = b.AllowUnixSockets
	writable := []string{p.Cwd}
	for _, w := range b.AllowWrite {
		r, err := realDir(w)
		if err != nil {
			return Policy{}, fmt.Errorf("sandbox: allowWrite %s: %w", w, err)
		}
		if !slices.Contains(writable, r) {
			writable = append(writable, r)
			p.Writable = append(p.Writable, r)
		}
	}
	if c := envLookup(env, "npm_config_cache"); c != "" && filepath.IsAbs(c) {
		if r, err := config.ResolvePath(c); err == nil && slices.ContainsFunc(writable, func(w string) bool { return within(r, w) }) {
			p.NPMCache = r
		}
	}
	if p.NPMCache == "" && h.NPMCache != "" {
		r, err := config.ResolvePath(h.NPMCache)
		if err != nil {
			return Policy{}, fmt.Errorf("sandbox: npm's cache %s: %w", h.NPMCache, err)
		}
		p.NPMCache = r
		if !slices.ContainsFunc(writable, func(w string) bool { return within(r, w) }) {
			writable = append(writable, r)
			p.Writable = append([]string{r}, p.Writable...)
		}
	}
	p.ReadOnly = ownFiles(argv, p.Cwd, writable)
	for _, r := range b.AllowRead {
		rr, err := filepath.EvalSymlinks(r)
		if err != nil {
			return Policy{}, fmt.Errorf("sandbox: allowRead %s: %w", r, err)
		}
		p.ReadOnly = appendNew(p.ReadOnly, rr)
	}
	for _, w := range writable {
		if w == p.NPMCache {
			continue // npm's own files, which it writes itself
		}
		if slices.Contains(homes, w) {
			p.Sealed = append(p.Sealed, w)
		}
		for _, rel := range Protected {
			if homeOnly[rel] && !slices.Contains(homes, w) {
				continue // a project's .bashrc runs nowhere
			}
			p.Protected = appendNew(p.Protected, filepath.Join(w, rel))
		}
	}
	var deny []string
	for _, home := range h.Homes {
		for _, d := range slices.Concat(DefaultDenyRead, Credentials) {
			deny = append(deny, filepath.Join(home, d))
		}
	}
	deny = append(deny, h.Own...)
	deny = append(deny, b.DenyRead...)
	for _, d := range deny {
		r, err := config.ResolvePath(d)
		if err != nil {
			continue
		}
		if _, err := os.Lstat(r); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if filepath.Base(d) == ".npmrc" && slices.Contains(h.Homes, filepath.Dir(d)) {
			p.Masked = appendNew(p.Masked, r)
			continue
		}
		p.DenyRead = appendNew(p.DenyRead, r)
	}
	return p, nil
}

// ownFiles are the directories of the server's own program and of the
// package a path among its arguments lies in, where they would vanish in
// the sandbox: inside one of its private directories (/tmp, /run/user) and
// no writable one. A package is the nearest directory above the file with
// a package.json, or, inside node_modules, the directory that holds the
// outermost node_modules, so that what it imports is found too.
func ownFiles(argv []string, cwd string, writable []string) []string {
	var out []string
	for i, a := range argv {
		path := a
		if i == 0 {
			prog, err := exec.LookPath(a)
			if err != nil {
				continue
			}
			path = prog
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(cwd, path)
		}
		r, err := filepath.EvalSymlinks(path)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(r); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if !slices.ContainsFunc(privateDirs, func(d string) bool { return within(r, d) }) ||
			slices.ContainsFunc(writable, func(w string) bool { return within(r, w) }) {
			continue
		}
		out = appendNew(out, packageRoot(r))
	}
	return out
}

// packageRoot is the directory a program file belongs to (see ownFiles).
func packageRoot(file string) string {
	dir := filepath.Dir(file)
	root := dir
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "package.json")); err == nil {
			root = d
			break
		}
		if filepath.Dir(d) == d || slices.Contains(privateDirs, d) {
			break
		}
	}
	if i := strings.Index(root+"/", "/node_modules/"); i >= 0 {
		root = root[:i]
	}
	return root
}

// Describe says in a line what a server in p may do, as the approval of
// a project server, its status and the extension's tooltip show it.
func (p Policy) Describe() string {
	var b strings.Builder
	b.WriteString("sandboxed: system read-only; writes ")
	w := []string{p.tilde(p.Cwd), "a private /tmp"}
	for _, d := range p.Writable {
		s := p.tilde(d)
		if d == p.NPMCache {
			s += " (npm's cache)"
		}
		w = append(w, s)
	}
	if p.NPMCache != "" && !slices.Contains(p.Writable, p.NPMCache) {
		w = append(w, p.tilde(p.NPMCache)+" (npm's cache)")
	}
	b.WriteString(strings.Join(w, ", "))
	if len(p.Sealed) > 0 {
		b.WriteString("; adds nothing at the top of ")
		b.WriteString(strings.Join(p.tildes(p.Sealed), ", "))
	}
	if len(p.Protected) > 0 {
		b.WriteString("; never writes their ")
		b.WriteString(strings.Join(Protected, ", "))
	}
	if len(p.ReadOnly) > 0 {
		b.WriteString("; also reads ")
		b.WriteString(strings.Join(p.tildes(p.ReadOnly), ", "))
	}
	if hidden := slices.Concat(p.DenyRead, p.Masked); len(hidden) > 0 {
		b.WriteString("; cannot read ")
		b.WriteString(strings.Join(p.tildes(hidden), ", "))
		if len(p.Masked) > 0 {
			b.WriteString(" (")
			b.WriteString(strings.Join(p.tildes(p.Masked), ", "))
			b.WriteString(" read without its tokens)")
		}
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

// DescribeServer says in a line what sandbox the entry srv gets for the
// user h: "not sandboxed" for an entry that opts out, else the Describe of
// its resolved policy, or why it cannot be resolved (the server would not
// start either).
func DescribeServer(srv config.Server, h Host) string {
	if !srv.Sandboxed() {
		return "not sandboxed: it runs with all of your rights"
	}
	p, err := PolicyOf(srv, h)
	if err != nil {
		return "sandboxed, but it cannot start: " + err.Error()
	}
	return p.Describe()
}

// tilde is path with the user's home written ~.
func (p Policy) tilde(path string) string {
	if p.Home != "" && within(path, p.Home) && path != p.Home {
		return "~" + strings.TrimPrefix(path, p.Home)
	}
	return path
}

func (p Policy) tildes(paths []string) []string {
	out := make([]string, len(paths))
	for i, s := range paths {
		out[i] = p.tilde(s)
	}
	return out
}

// realDir is dir absolute with its symbolic links resolved; it must be a
// directory.
func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	r, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(r)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", r)
	}
	return r, nil
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
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
