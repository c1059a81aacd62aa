package config

import (
	"cmp"
	"fmt"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
)

// Check returns why the policy blocks s, or nil if it does not (and for a
// nil m). In order:
//
//   - deniedMcpServers: an entry that matches s blocks it, whatever else
//     the policy says, a managed server included. A name matches exactly;
//     a serverCommand a local server's argv exactly; a serverUrl a remote
//     server's URL (see below). Each of those is tried on the entry as
//     written and on s as written, and with ${env:NAME} expanded by
//     lookup in either where that expands: any match blocks.
//   - A managed server (ScopeManaged) runs from here on.
//   - exclusive: every other server is blocked.
//   - allowedMcpServers, when set: s must match an entry. A remote server
//     matches a serverUrl entry; a name entry counts for it only when
//     the list has no serverUrl entry at all. Likewise a local server and
//     serverCommand entries. Here an entry is taken as written, and s with
//     ${env:NAME} expanded: the URL FreeCode would dial (one that does not
//     expand matches no serverUrl entry) and the argv, which must match
//     both as written (what runs: FreeCode does not expand commands) and
//     expanded.
//
// A registryName entry matches an entry whose "registry" block (what
// `freecode mcp install` writes) names that MCP Registry server, and with
// a registryVersion only one installed at a version in its range (in the
// deny-list, also one whose version the range cannot compare). The block
// is the entry's own claim, so in the allow-list it counts like a
// serverName: alone only where a name would (a remote server still needs
// a URL match when the list has serverUrl entries). An Invalid entry
// allows none. lookup nil is os.LookupEnv.
//
// A serverUrl pattern is matched part by part. Its "*" matches any run
// of characters, none included; everything else is literal. The scheme
// and host are compared without regard to case, a trailing dot of the
// host and a default port (443 for https, 80 for http) dropped on both
// sides, the URL's user info and fragment ignored, and a "*" of the host
// never reaches into the path. A pattern with no path matches every path
// (https://mcp.example.com); one with a path matches the URL's path and
// query as written, case and all, and never a path with "." or ".."
// segments, which a server could resolve outside it. A deny pattern
// reaches further, since matching more only blocks more: with no port it
// covers every port of its host, and its path is also tried on the URL's
// path decoded, its dot segments resolved, without the query when the
// pattern has none, and without a trailing slash.
func (m *Managed) Check(s Server, lookup func(string) (string, bool)) *Blocked {
	if m == nil {
		return nil
	}
	if lookup == nil {
		lookup = os.LookupEnv
	}
	c := newCandidate(s, lookup)
	for _, e := range m.Denied {
		if c.deniedBy(e, lookup) {
			at := fmt.Sprintf("%s[%d]", cmp.Or(e.List, keyDenied), e.Index)
			if e.Path != "" {
				at += " in " + e.Path
			}
			return m.blocked(at)
		}
	}
	if s.Scope == ScopeManaged {
		return nil
	}
	if m.Exclusive {
		why := "only its own servers may run"
		if files := m.filesWith(func(f ManagedFile) bool { return f.Exclusive }, nil); files != "" {
			why += " (exclusive in " + files + ")"
		}
		return m.blocked(why)
	}
	if m.Allowed != nil && !c.allowed(m.Allowed) {
		why := "not in " + keyAllowed
		if files := m.filesWith(func(f ManagedFile) bool { return f.Allowlist }, m.Allowed); files != "" {
			why += " (" + files + ")"
		}
		return m.blocked(why)
	}
	return nil
}

func (m *Managed) blocked(why string) *Blocked {
	return &Blocked{Reason: "blocked by your organization's policy: " + why, Message: m.Message}
}

// filesWith lists the files that pass has, or else (a Managed not
// loaded from files) those the entries are from.
func (m *Managed) filesWith(has func(ManagedFile) bool, entries []ServerMatch) string {
	var paths []string
	for _, f := range m.Files {
		if has(f) {
			paths = append(paths, f.Path)
		}
	}
	if len(paths) == 0 {
		for _, e := range entries {
			if e.Path != "" && !slices.Contains(paths, e.Path) {
				paths = append(paths, e.Path)
			}
		}
	}
	return strings.Join(paths, ", ")
}

// candidate is a server as the policy sees it: its command and URL as
// written and expanded.
type candidate struct {
	s       Server
	remote  bool
	cmdExp  []string // the argv expanded; nil if it does not expand
	urlExp  string   // the URL expanded; "" if it does not expand
	urlForm []string // the URL as written and expanded, for deny patterns
}

func newCandidate(s Server, lookup func(string) (string, bool)) *candidate {
	c := &candidate{s: s, remote: s.Type == TypeRemote}
	if c.remote {
		c.urlForm = []string{s.URL}
		if u, err := Expand(s.URL, lookup); err == nil {
			c.urlExp = u
			if u != s.URL {
				c.urlForm = append(c.urlForm, u)
			}
		}
		return c
	}
	c.cmdExp = expandArgv(s.Command, lookup)
	return c
}

// expandArgv expands every argument of argv, or returns nil if one does
// not expand.
func expandArgv(argv []string, lookup func(string) (string, bool)) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		x, err := Expand(a, lookup)
		if err != nil {
			return nil
		}
		out[i] = x
	}
	return out
}

// deniedBy reports whether the deny entry e matches c: any of its fields,
// on any form of either side.
func (c *candidate) deniedBy(e ServerMatch, lookup func(string) (string, bool)) bool {
	if e.Name != "" && e.Name == c.s.Name {
		return true
	}
	if e.Registry != "" && c.registry() == e.Registry {
		// A version the range cannot compare is denied: matching more
		// only blocks more.
		r, err := parseVersionRange(e.RegistryVersion)
		if e.RegistryVersion == "" || err != nil || !r.comparable(c.registryVersion()) || r.contains(c.registryVersion(), true) {
			return true
		}
	}
	if len(e.Command) > 0 && !c.remote {
		pats := [][]string{e.Command}
		if x := expandArgv(e.Command, lookup); x != nil {
			pats = append(pats, x)
		}
		for _, p := range pats {
			if slices.Equal(p, c.s.Command) || c.cmdExp != nil && slices.Equal(p, c.cmdExp) {
				return true
			}
		}
	}
	if e.URL != "" && c.remote {
		pats := []string{e.URL}
		if x, err := Expand(e.URL, lookup); err == nil && x != e.URL {
			pats = append(pats, x)
		}
		for _, p := range pats {
			for _, u := range c.urlForm {
				if matchURL(p, u, true) {
					return true
				}
			}
		}
	}
	return false
}

// registry returns the MCP Registry name c's entry was installed as; ""
// for an entry with no registry block.
func (c *candidate) registry() string {
	if c.s.Registry == nil {
		return ""
	}
	return c.s.Registry.Name
}

// registryVersion returns the version c's entry was installed at; ""
// for an entry with no registry block.
func (c *candidate) registryVersion() string {
	if c.s.Registry == nil {
		return ""
	}
	return c.s.Registry.Version
}

// allowed reports whether an entry of the allow-list allows c.
func (c *candidate) allowed(list []ServerMatch) bool {
	hasURL := slices.ContainsFunc(list, func(e ServerMatch) bool { return e.URL != "" })
	hasCommand := slices.ContainsFunc(list, func(e ServerMatch) bool { return len(e.Command) > 0 })
	nameEnough := c.remote && !hasURL || !c.remote && !hasCommand
	for _, e := range list {
		if c.allowedBy(e, nameEnough) {
			return true
		}
	}
	return false
}

// allowedBy reports whether the allow entry e matches c: every field it
// sets, and a name alone only where nameEnough.
func (c *candidate) allowedBy(e ServerMatch, nameEnough bool) bool {
	switch {
	case e.Invalid:
		return false
	case e.Name == "" && e.URL == "" && len(e.Command) == 0 && e.Registry == "":
		return false
	case e.Name != "" && e.Name != c.s.Name:
		return false
	case e.Registry != "" && e.Registry != c.registry():
		return false
	case e.RegistryVersion != "" && !inRange(e.RegistryVersion, c.registryVersion()):
		return false
	case e.URL != "" && !(c.remote && c.urlExp != "" && matchURL(e.URL, c.urlExp, false)):
		return false
	case len(e.Command) > 0 && !(!c.remote && slices.Equal(e.Command, c.s.Command) && slices.Equal(e.Command, c.cmdExp)):
		return false
	case e.URL == "" && len(e.Command) == 0:
		return nameEnough
	}
	return true
}

// urlParts is a URL or a pattern taken apart for matching.
type urlParts struct {
	scheme string // lower case
	host   string // lower case, without a trailing dot; IPv6 in brackets
	port   string // "" when none is written (or the default, for a URL)
	rest   string // the path and query as written, without the fragment
}

// defaultPort is the port a URL of scheme means when it names none.
func defaultPort(scheme string) string {
	switch scheme {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// splitURL takes raw apart at "://" and the end of the authority.
func splitURL(raw string) (scheme, authority, rest string, ok bool) {
	i := strings.Index(raw, "://")
	if i <= 0 {
		return "", "", "", false
	}
	scheme, after := strings.ToLower(raw[:i]), raw[i+3:]
	end := strings.IndexAny(after, "/?#")
	if end < 0 {
		end = len(after)
	}
	authority, rest = after[:end], after[end:]
	if j := strings.IndexByte(rest, '#'); j >= 0 {
		rest = rest[:j]
	}
	return scheme, authority, rest, true
}

// parseServerURL takes a server's URL apart; false if it is not one.
// The host is Go's reading of it (percent-escapes decoded), the one the
// connection goes to.
func parseServerURL(raw string) (urlParts, bool) {
	scheme, authority, rest, ok := splitURL(raw)
	if !ok || authority == "" {
		return urlParts{}, false
	}
	u, err := url.Parse(scheme + "://" + authority + "/")
	if err != nil || u.Hostname() == "" {
		return urlParts{}, false
	}
	p := urlParts{scheme: scheme, host: strings.TrimSuffix(strings.ToLower(u.Hostname()), "."), port: u.Port(), rest: rest}
	if strings.Contains(p.host, ":") {
		p.host = "[" + p.host + "]"
	}
	if p.port == defaultPort(scheme) {
		p.port = ""
	}
	if p.rest == "" || p.rest[0] == '?' {
		p.rest = "/" + p.rest
	}
	return p, true
}

// parsePattern takes a serverUrl pattern apart; false if it has no
// "://" (it is then matched against the whole URL).
func parsePattern(raw string) (urlParts, bool) {
	scheme, authority, rest, ok := splitURL(raw)
	if !ok {
		return urlParts{}, false
	}
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = authority[i+1:]
	}
	p := urlParts{scheme: scheme, rest: rest}
	host := strings.ToLower(authority)
	if strings.HasPrefix(host, "[") {
		if i := strings.IndexByte(host, ']'); i >= 0 {
			host, p.port = host[:i+1], strings.TrimPrefix(host[i+1:], ":")
		}
	} else if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host, p.port = host[:i], host[i+1:]
	}
	p.host = strings.TrimSuffix(host, ".")
	if p.port == defaultPort(scheme) {
		p.port = ""
	}
	return p, true
}

// matchURL reports whether the serverUrl pattern matches the URL raw,
// deny saying how far (see Check).
func matchURL(pattern, raw string, deny bool) bool {
	u, ok := parseServerURL(raw)
	if !ok {
		// Not a URL FreeCode could dial: allowed by nothing, denied by
		// a pattern that matches it as it is.
		return deny && glob(strings.ToLower(pattern), strings.ToLower(raw))
	}
	p, ok := parsePattern(pattern)
	if !ok {
		whole := u.scheme + "://" + u.host
		if u.port != "" {
			whole += ":" + u.port
		}
		return glob(pattern, whole+u.rest)
	}
	if !glob(p.scheme, u.scheme) || !glob(p.host, u.host) {
		return false
	}
	switch {
	case p.port == "" && !deny:
		if u.port != "" {
			return false
		}
	case p.port != "":
		port := u.port
		if port == "" {
			port = defaultPort(u.scheme)
		}
		if !glob(p.port, port) {
			return false
		}
	}
	if p.rest == "" {
		return true
	}
	if !deny {
		return !hasDotSegment(u.rest) && glob(p.rest, u.rest)
	}
	for _, r := range denyForms(u.rest, strings.Contains(p.rest, "?")) {
		if glob(p.rest, r) || glob(strings.TrimSuffix(p.rest, "/"), strings.TrimSuffix(r, "/")) {
			return true
		}
	}
	return false
}

// hasDotSegment reports whether the path of rest, decoded, has a "." or
// ".." segment (a backslash counted as a slash, as some servers do).
func hasDotSegment(rest string) bool {
	p, _, _ := strings.Cut(rest, "?")
	dec, err := url.PathUnescape(p)
	if err != nil {
		return true
	}
	for seg := range strings.FieldsFuncSeq(dec, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// denyForms are the ways a deny pattern's path is tried on rest: as
// written, decoded, and with its dot segments resolved; each also
// without the query, unless the pattern has one.
func denyForms(rest string, patternHasQuery bool) []string {
	p, q, hasQuery := strings.Cut(rest, "?")
	paths := []string{p}
	if dec, err := url.PathUnescape(p); err == nil {
		paths = append(paths, dec, path.Clean("/"+strings.ReplaceAll(dec, `\`, "/")))
	}
	var out []string
	for _, x := range paths {
		if hasQuery {
			out = append(out, x+"?"+q)
		}
		if !hasQuery || !patternHasQuery {
			out = append(out, x)
		}
	}
	return out
}

// glob reports whether s matches pattern, where "*" matches any run of
// bytes (none included) and every other byte itself. It backtracks only
// to the last "*", so it takes time linear in their product at worst.
func glob(pattern, s string) bool {
	px, sx := 0, 0
	nextPx, nextSx := 0, 0
	for px < len(pattern) || sx < len(s) {
		if px < len(pattern) {
			if c := pattern[px]; c == '*' {
				nextPx, nextSx = px, sx+1
				px++
				continue
			} else if sx < len(s) && s[sx] == c {
				px++
				sx++
				continue
			}
		}
		if 0 < nextSx && nextSx <= len(s) {
			px, sx = nextPx, nextSx
			continue
		}
		return false
	}
	return true
}
