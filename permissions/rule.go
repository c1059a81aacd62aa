package permissions

import (
	"errors"
	"fmt"
	"strings"

	"github.com/freecode/freecode/internal/toolid"
)

// Effect is what a rule does to the tools it covers. Deny beats Ask beats
// Allow; the zero value is no effect and never appears in a Decision.
type Effect uint8

// The effects, in increasing precedence.
const (
	Allow Effect = iota + 1
	Ask
	Deny
)

func (e Effect) String() string {
	switch e {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return fmt.Sprintf("Effect(%d)", uint8(e))
}

// Source is where a rule comes from.
type Source uint8

// The sources, in the order Rules lists them.
const (
	SourceManaged Source = iota + 1 // the organization's managed settings (LoadOptions.Managed)
	SourceUser                      // ~/.freecode/settings.json
	SourceProject                   // <project>/.freecode/settings.json
	SourceLocal                     // <project>/.freecode/settings.local.json
	SourceSession                   // AllowSession: in memory until the sidecar exits
)

func (s Source) String() string {
	switch s {
	case SourceManaged:
		return "managed"
	case SourceUser:
		return "user"
	case SourceProject:
		return "project"
	case SourceLocal:
		return "local"
	case SourceSession:
		return "session"
	}
	return fmt.Sprintf("Source(%d)", uint8(s))
}

// Rule is one pattern of a rule file, or of the session.
type Rule struct {
	Pattern string // as written, without surrounding whitespace
	Effect  Effect
	Source  Source
	File    string // the settings file (the managed one for SourceManaged); "" for SourceSession
}

// Decision is the outcome of Set.Decide.
type Decision struct {
	Effect Effect
	// Rule is the rule that decided, nil when no rule matched. It points
	// into the Set's current rules and must not be modified.
	Rule *Rule
	// Reason is the human text the protocol puts in permission requests and
	// denials: "no rule; tool is not read-only", `ask rule "mcp__github" in
	// /p/.freecode/settings.json`, `denied by rule "…" in …`; a managed
	// rule is "your organization's": `denied by your organization's rule
	// "mcp__x" in /etc/freecode/managed-settings.json`.
	Reason string
}

// The reasons when no rule matched.
const (
	reasonReadOnly    = "no rule; tool is read-only"
	reasonNotReadOnly = "no rule; tool is not read-only"
)

// reason is the Decision.Reason for r, built once when the rule is indexed
// so that Decide does not allocate. message is the organization's text
// for its refusals (LoadOptions.ManagedMessage), added to a managed deny
// rule's reason after " — ".
func (r *Rule) reason(message string) string {
	where := "in " + r.File
	if r.Source == SourceSession {
		where = "for this session"
	}
	rule := "rule"
	if r.Source == SourceManaged {
		rule = "your organization's rule"
	}
	switch r.Effect {
	case Deny:
		s := fmt.Sprintf("denied by %s %q %s", rule, r.Pattern, where)
		if r.Source == SourceManaged && message != "" {
			s += " — " + message
		}
		return s
	case Ask:
		if r.Source == SourceManaged {
			return fmt.Sprintf("your organization's ask rule %q %s", r.Pattern, where)
		}
		return fmt.Sprintf("ask rule %q %s", r.Pattern, where)
	}
	return fmt.Sprintf("allowed by %s %q %s", rule, r.Pattern, where)
}

// maxPattern bounds a pattern's length, and so the work of matching it.
// Tool ids longer than 64 characters exist (providers see an alias), but
// not by this much.
const maxPattern = 512

// kind is the form of a compiled pattern; see the package comment.
type kind uint8

const (
	kindAll     kind = iota + 1 // "*": every tool
	kindBuiltin                 // no "__": a built-in tool's name
	kindServer                  // "mcp", "mcp__<server>": every tool of the servers
	kindTool                    // "mcp__<server>__<tool>": those tools
)

// pattern is a compiled rule pattern.
type pattern struct {
	kind    kind
	literal bool   // no '*' anywhere: kindBuiltin and kindTool compare the whole id
	text    string // the whole pattern, for literal comparison
	name    glob   // kindBuiltin
	server  glob   // kindServer, kindTool
	tool    glob   // kindTool
}

// glob is a pattern part in which '*' matches any run of characters,
// possibly empty. The parts it is matched against (a server name, a tool
// name, a built-in's name) have already been cut out of the id, so a '*'
// never reaches across the "__" between server and tool.
type glob struct {
	s    string
	star bool
	// For a glob, the literal text before its first '*' and after its
	// last: most candidates fail on them without running wildcard, and
	// with a single '*' they decide alone.
	prefix, suffix string
	oneStar        bool
}

func newGlob(s string) glob {
	g := glob{s: s, star: strings.IndexByte(s, '*') >= 0}
	if g.star {
		first, last := strings.IndexByte(s, '*'), strings.LastIndexByte(s, '*')
		g.prefix, g.suffix, g.oneStar = s[:first], s[last+1:], first == last
	}
	return g
}

func (g *glob) match(x string) bool {
	if !g.star {
		return g.s == x
	}
	if len(x) < len(g.prefix)+len(g.suffix) || !strings.HasPrefix(x, g.prefix) || !strings.HasSuffix(x, g.suffix) {
		return false
	}
	return g.oneStar || wildcard(g.s, x)
}

// wildcard reports whether x matches p, where '*' in p matches any run of
// characters. It is the usual linear matcher: on a mismatch it retries
// from the last '*', letting it swallow one more character.
func wildcard(p, x string) bool {
	pi, xi := 0, 0
	starP, starX := -1, 0
	for xi < len(x) {
		switch {
		case pi < len(p) && p[pi] == '*':
			starP, starX = pi, xi
			pi++
		case pi < len(p) && p[pi] == x[xi]:
			pi++
			xi++
		case starP >= 0:
			starX++
			pi, xi = starP+1, starX
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// errInvalid wraps every reason a pattern is rejected.
var errInvalid = errors.New("invalid rule")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errInvalid}, args...)...)
}

// compile checks a pattern and compiles it. The returned string is the
// pattern without surrounding whitespace.
func compile(raw string) (pattern, string, error) {
	p := strings.TrimSpace(raw)
	if p == "" {
		return pattern{}, p, invalid("empty pattern")
	}
	if len(p) > maxPattern {
		return pattern{}, p, invalid("pattern longer than %d characters", maxPattern)
	}
	for _, c := range p {
		if c >= 0x80 || !toolid.IsNameChar(byte(c)) && c != '*' {
			return pattern{}, p, invalid("character %q is not allowed: tool ids use only A-Z a-z 0-9 _ - (MCP tool names are sanitized to them), and * as a wildcard", c)
		}
	}
	if strings.Contains(p, "**") {
		return pattern{}, p, invalid("** is not supported: * already matches any run of characters within the server or the tool part")
	}
	lit := !strings.Contains(p, "*")
	if p == "*" {
		return pattern{kind: kindAll, text: p}, p, nil
	}
	if p == "mcp" {
		return pattern{kind: kindServer, text: p, server: newGlob("*")}, p, nil
	}
	if !strings.Contains(p, "__") {
		if strings.HasPrefix(p, "mcp*") {
			// A built-in glob that looks like it means MCP tools: it would
			// cover none of them, so say so instead of silently not applying.
			return pattern{}, p, invalid("%q would only cover built-in tools; write mcp__* for every MCP tool", p)
		}
		return pattern{kind: kindBuiltin, literal: lit, text: p, name: newGlob(p)}, p, nil
	}
	if !strings.HasPrefix(p, toolid.Prefix) {
		return pattern{}, p, invalid("a rule with __ names MCP tools and must start with mcp__ (mcp__<server> or mcp__<server>__<tool>)")
	}
	rest := p[len(toolid.Prefix):]
	i := strings.Index(rest, "__")
	if rest == "" || i == 0 {
		return pattern{}, p, invalid("empty server name after mcp__ (write mcp__* for every MCP tool)")
	}
	if i < 0 {
		return pattern{kind: kindServer, literal: lit, text: p, server: newGlob(rest)}, p, nil
	}
	server, tool := rest[:i], rest[i+2:]
	if strings.HasSuffix(tool, "__") || tool == "" {
		return pattern{}, p, invalid("a pattern cannot end with __: write mcp__<server> for every tool of a server")
	}
	if strings.HasPrefix(tool, "_") && !lit {
		// "mcp__a___x*" is server "a" and tool "_x*", or server "a_" and
		// tool "x*". A literal pattern is compared as a whole and means the
		// same either way; a glob would not.
		return pattern{}, p, invalid("ambiguous: the server part ends in _ or the tool part starts with _; write the full tool id without *")
	}
	return pattern{kind: kindTool, literal: lit, text: p, server: newGlob(server), tool: newGlob(tool)}, p, nil
}

// Validate reports why pattern is not a valid rule, or nil.
func Validate(pattern string) error {
	_, _, err := compile(pattern)
	return err
}

// matchReading reports whether an MCP pattern (kindServer, kindTool)
// covers one reading of an id.
func (p *pattern) matchReading(r toolid.Reading) bool {
	switch p.kind {
	case kindServer:
		return p.server.match(r.Server)
	case kindTool:
		return r.HasTool && p.server.match(r.Server) && p.tool.match(r.Tool)
	}
	return false
}
