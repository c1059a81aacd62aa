package config

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/freecode/freecode/internal/toolid"
	"github.com/freecode/freecode/internal/urlpolicy"
)

// Problem is one broken rule in a config file.
type Problem struct {
	Key    string // where, e.g. "mcp.servers[2].timeout"
	Server string // the entry's name, if it has one
	Msg    string // what is wrong and what the rule is
	// Line and Col are where in the file (1-based; the column in bytes):
	// the value of Key, or its name for a key FreeCode does not know, or
	// the nearest part of Key the file has. 0 when the file has none of it.
	Line, Col int
	// Warning marks a problem that does not stop the file from loading: a
	// key FreeCode ignores.
	Warning bool
}

// String returns the problem as one line: key, server, message.
func (p Problem) String() string {
	if p.Server != "" {
		return fmt.Sprintf("%s (server %q): %s", p.Key, p.Server, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.Key, p.Msg)
}

// ValidationError is a config file that parses but breaks the rules. It
// lists every problem at once, so one edit can fix them all.
type ValidationError struct {
	Path     string
	Problems []Problem
	// Warnings are the file's keys FreeCode ignores, which would not have
	// stopped it from loading by themselves.
	Warnings []Problem
}

// Error returns every problem where it is, "path:line:col: " (the form
// editors and terminals turn into a link, as for a ParseError), one a line
// when there are several.
func (e *ValidationError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0].at(e.Path) + e.Problems[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d problems:", e.Path, len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n\t")
		b.WriteString(p.at(e.Path))
		b.WriteString(p.String())
	}
	return b.String()
}

// at returns "path:line:col: ", or "path: " for a problem the file has no
// place for.
func (p Problem) at(path string) string {
	if p.Line == 0 {
		return path + ": "
	}
	return fmt.Sprintf("%s:%d:%d: ", path, p.Line, p.Col)
}

// sortProblems orders problems by key, indexes numerically, so the report
// reads in the file's order and is the same on every run.
func sortProblems(ps []Problem) {
	slices.SortStableFunc(ps, func(a, b Problem) int { return compareKeys(a.Key, b.Key) })
}

// compareKeys compares "mcp.servers[10].url" and "mcp.servers[9]" with the
// numbers in brackets compared as numbers.
func compareKeys(a, b string) int {
	for a != "" && b != "" {
		if a[0] == '[' && b[0] == '[' {
			ea, eb := strings.IndexByte(a, ']'), strings.IndexByte(b, ']')
			if ea > 0 && eb > 0 {
				na, _ := strconv.Atoi(a[1:ea])
				nb, _ := strconv.Atoi(b[1:eb])
				if na != nb {
					return cmp.Compare(na, nb)
				}
				a, b = a[ea+1:], b[eb+1:]
				continue
			}
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

// CheckName reports whether name is a valid server name, and if not, why.
// Server names become part of tool ids (mcp__<server>__<tool>); the rule is
// toolid.CheckServer's.
func CheckName(name string) error {
	return toolid.CheckServer(name)
}

// validate checks the decoded servers: every name valid (CheckName) and
// unique, and each entry by checkServer. Each problem is recorded under its
// key and none stops the others, so the user sees them all at once.
func (d *decoder) validate(cfg *Config) {
	seen := make(map[string]string) // name -> key of its first entry
	for i, s := range cfg.MCP.Servers {
		key := d.entries[i]
		if d.failed(key + ".name") {
			// A name of the wrong type was reported already.
		} else if err := CheckName(s.Name); err != nil {
			d.fail(key+".name", "", "%v", err)
		} else if first, dup := seen[s.Name]; dup {
			d.fail(key+".name", s.Name, "duplicate name: %s has it already; names must be unique", first)
		} else {
			seen[s.Name] = key
		}
		for _, p := range checkServer(s) {
			p.Key = key + p.Key
			// A value of the wrong type was reported already and left
			// empty: saying it is also missing would be noise.
			if !d.failed(p.Key) {
				d.problems = append(d.problems, p)
			}
		}
	}
}

// failed reports whether key has a problem already.
func (d *decoder) failed(key string) bool {
	return slices.ContainsFunc(d.problems, func(q Problem) bool { return q.Key == key })
}

// versionRe is the shape of MCP protocol versions: a date.
var versionRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// checkServer returns the problems of one entry besides its name, with
// keys relative to the entry (".url").
func checkServer(s Server) []Problem {
	var ps []Problem
	fail := func(key, format string, args ...any) {
		ps = append(ps, Problem{Key: key, Server: s.Name, Msg: fmt.Sprintf(format, args...)})
	}
	switch s.Type {
	case TypeLocal:
		if len(s.Command) == 0 || s.Command[0] == "" {
			fail(".command", "a local server needs a non-empty command")
		}
	case TypeRemote:
		if err := CheckURL(s.URL); err != nil {
			fail(".url", "%v", err)
		}
		switch s.Transport {
		case TransportAuto, TransportHTTP, TransportSSE:
		default:
			fail(".transport", "transport %q must be \"http\", \"sse\" or \"auto\"", s.Transport)
		}
	case "":
		fail(".type", "want \"local\" (with a command) or \"remote\" (with a url); \"stdio\", \"http\" and \"sse\" are taken too")
	default:
		fail(".type", "type %q must be \"local\" or \"remote\" (or \"stdio\", \"http\", \"sse\")", s.Type)
	}
	if s.ProtocolVersion != "" && !versionRe.MatchString(s.ProtocolVersion) {
		fail(".protocolVersion", "protocol version %q must be an MCP version date like %q", s.ProtocolVersion, DefaultProtocolVersion)
	}
	if s.ClientCert != "" && s.ClientKey == "" || s.ClientCert == "" && s.ClientKey != "" {
		fail(".clientCert", "clientCert and clientKey go together (mTLS)")
	}
	return append(ps, checkOAuth(s)...)
}

// CheckURL reports whether raw is an acceptable remote server URL under
// the URL policy (internal/urlpolicy): https, or http only to a loopback
// host; never a link-local or cloud-metadata address. ${env:NAME}
// references are allowed in its path and query; the scheme and host must
// be literal. This is the parse-time check only: the dialer checks the
// addresses it really connects to.
func CheckURL(raw string) error {
	if raw == "" {
		return fmt.Errorf("a remote server needs a url")
	}
	if i := strings.Index(raw, "${"); i >= 0 && !strings.Contains(strings.TrimPrefix(strings.TrimPrefix(raw[:i], "https://"), "http://"), "/") {
		return fmt.Errorf("url %q: write the scheme and host out; ${env:…} is allowed only in the path and query", urlpolicy.RedactURL(raw))
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse quotes the whole URL, secrets included: keep its reason only.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return fmt.Errorf("url %q does not parse: %v", urlpolicy.RedactURL(raw), err)
	}
	var perr *urlpolicy.Error
	if err := urlpolicy.Check(u); errors.As(err, &perr) {
		return fmt.Errorf("url %q: %s", urlpolicy.RedactURL(raw), perr.Rule)
	} else if err != nil {
		return err
	}
	return nil
}

// IsLoopbackHost reports whether host (without port) names loopback:
// localhost, a name under .localhost, or a loopback IP address.
func IsLoopbackHost(host string) bool { return urlpolicy.IsLoopbackHost(host) }
