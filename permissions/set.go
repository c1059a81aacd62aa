package permissions

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/freecode/freecode/internal/toolid"
)

// Set is the organization's managed rules, the rules of the settings files
// and the session's allow rules. Its methods are safe for concurrent use;
// the zero Set and a nil *Set have no rules.
//
// Decide is on every tool call's path, from many goroutines at once, so it
// takes no lock: it reads an immutable index through an atomic pointer.
// Writers (AllowSession, Reload) take writeMu, build a new index from the
// rules it guards and publish it.
type Set struct {
	// writeMu serializes writers, so that each builds on the latest rules.
	writeMu sync.Mutex
	managed []Rule      // LoadOptions.Managed: deny, then ask, then allow rules
	message string      // LoadOptions.ManagedMessage
	files   []fileRules // each file's last good rules, in load order
	session []Rule      // AllowSession's rules, in the order they came
	// managedOnly is LoadOptions.ManagedOnly of the last Load or Reload:
	// only managed allow rules apply. Written under writeMu.
	managedOnly atomic.Bool
	// trusted is LoadOptions.Trusted of the last Load or Reload: whether
	// the project's allow rules apply.
	trusted atomic.Bool
	// pending is what the last Load or Reload held back for the user's
	// review (LoadOptions.Accepted); nil when nothing.
	pending atomic.Pointer[Pending]

	idx atomic.Pointer[index] // written under writeMu; read by anyone
}

// setFiles replaces the file rules with loaded ones, keeping the previous
// rules of a file that failed to load, and publishes a new index. The
// caller holds writeMu.
func (s *Set) setFiles(loaded []fileRules) {
	prev := make(map[string][]Rule, len(s.files))
	for _, f := range s.files {
		prev[f.path] = f.rules
	}
	files := make([]fileRules, 0, len(loaded))
	for _, f := range loaded {
		if f.err != nil {
			rules := slices.Clone(prev[f.path])
			for _, r := range f.held {
				if !slices.Contains(rules, r) {
					rules = append(rules, r)
				}
			}
			f = fileRules{path: f.path, rules: rules}
		}
		files = append(files, f)
	}
	s.files = files
	s.publish()
}

// publish indexes the rules in force, managed rules first, and makes the
// index Decide's. While only managed allow rules apply (ManagedOnly) every
// other allow rule is left out here, whatever the loader let through: a
// file that failed to load keeps the rules of a load that may predate the
// policy, and the session's allows wait, unapplied, for it to lift. The
// caller holds writeMu.
func (s *Set) publish() {
	only := s.managedOnly.Load()
	var all []Rule
	for _, rs := range [][]Rule{s.managed, s.allFileRules(), s.session} {
		for _, r := range rs {
			if only && r.Effect == Allow && r.Source != SourceManaged {
				continue
			}
			all = append(all, r)
		}
	}
	s.idx.Store(buildIndex(all, s.message))
}

// allFileRules returns the file rules in force. The caller holds writeMu.
func (s *Set) allFileRules() []Rule {
	var all []Rule
	for _, f := range s.files {
		all = append(all, f.rules...)
	}
	return all
}

// Decide applies the rules to the tool id: a deny rule that covers it
// beats an ask rule, which beats an allow rule, whichever file each comes
// from. Among rules of the same effect the first in Rules order decides,
// so a managed rule is named before a file's. No allow rule of any source
// loosens a managed deny or ask rule: nothing does (see the package
// comment, Managed rules).
// With no rule, read-only tools are allowed and everything else asks.
//
// alias is the provider-facing name the registry gave the tool, "" when
// it has none (its id is at most toolid.MaxNameLen characters): a rule
// that names the alias covers the tool too (see the package comment,
// Aliases). s may be nil: no rules.
func (s *Set) Decide(id, alias string, readOnly bool) Decision {
	var x *index
	if s != nil {
		x = s.idx.Load()
	}
	if x != nil {
		if i := x.decide(id, alias); i >= 0 {
			return Decision{Effect: x.rules[i].Effect, Rule: &x.rules[i], Reason: x.reasons[i]}
		}
	}
	if readOnly {
		return Decision{Effect: Allow, Reason: reasonReadOnly}
	}
	return Decision{Effect: Ask, Reason: reasonNotReadOnly}
}

// Rules returns every rule in force, for freecode/permissions: the
// organization's managed rules, then the user file's, the project's, the
// local file's and the session's; within each deny, then ask, then allow
// rules, each in file order. Rules the loader ignored (invalid, allow rules
// of an untrusted project, allow rules ManagedOnly leaves out) are not in
// it. The slice is the caller's.
func (s *Set) Rules() []Rule {
	if s == nil {
		return []Rule{}
	}
	x := s.idx.Load()
	if x == nil {
		return []Rule{}
	}
	return slices.Clone(x.rules)
}

// ErrManagedOnly is AllowSession's error while the organization allows
// only its own allow rules (LoadOptions.ManagedOnly): a session allow would
// not apply, so none is kept.
var ErrManagedOnly = errors.New("your organization allows only its own allow rules")

// AllowSession allows the tools pattern covers for the rest of the
// session, in memory (an "always allow" answer applies at once, before its
// rule file is written and reloaded). It survives Reload. Adding a pattern
// twice is a no-op. Like any allow rule it loosens no deny or ask rule; and
// while ManagedOnly holds it fails with ErrManagedOnly and keeps nothing.
// A session allow kept before a Reload brought ManagedOnly stays out of
// force until a Reload lifts it.
func (s *Set) AllowSession(pattern string) error {
	_, p, err := compile(pattern)
	if err != nil {
		return fmt.Errorf("session allow rule %q: %w", pattern, err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.managedOnly.Load() {
		return fmt.Errorf("session allow rule %q: %w", p, ErrManagedOnly)
	}
	for _, r := range s.session {
		if r.Pattern == p {
			return nil
		}
	}
	s.session = append(s.session, Rule{Pattern: p, Effect: Allow, Source: SourceSession})
	s.publish()
	return nil
}

// RemoveSession takes back a session allow rule (an "always allow" answer
// undone) and reports whether there was one.
func (s *Set) RemoveSession(pattern string) (bool, error) {
	_, p, err := compile(pattern)
	if err != nil {
		return false, fmt.Errorf("session allow rule %q: %w", pattern, err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	n := len(s.session)
	s.session = slices.DeleteFunc(s.session, func(r Rule) bool { return r.Pattern == p })
	if len(s.session) == n {
		return false, nil
	}
	s.publish()
	return true, nil
}

// Reload loads the rule files again and replaces the file rules and the
// managed ones, keeping the session's. A file that cannot be read or does
// not parse keeps the rules it had (a user editing a file mid-save does not
// lose its deny rules); the error names it, with line and column. The
// managed rules are opts.Managed as given: the caller keeps the last good
// policy when the managed files do not load.
func (s *Set) Reload(opts LoadOptions) ([]Warning, error) {
	managed, warnings := loadManaged(opts)
	files, pending, ws, err := loadFiles(opts)
	warnings = append(warnings, ws...)
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.managed, s.message = managed, opts.ManagedMessage
	s.managedOnly.Store(opts.ManagedOnly)
	s.setFiles(files)
	s.trusted.Store(opts.Trusted)
	s.pending.Store(pending)
	return warnings, err
}

// Pending returns what the rule files of a trusted project loosen beyond
// what the user accepted (LoadOptions.Accepted), as of the last Load or
// Reload: allow rules ignored, deny and ask rules still enforced, until
// the user accepts them. Nil when nothing awaits. The value is shared and
// must not be modified. A nil Set reports nil.
func (s *Set) Pending() *Pending {
	if s == nil {
		return nil
	}
	return s.pending.Load()
}

// ManagedOnly reports whether the rules were last loaded with
// LoadOptions.ManagedOnly: only the organization's allow rules apply, and
// an "always allow" answer could take no effect. A nil Set reports false.
func (s *Set) ManagedOnly() bool {
	return s != nil && s.managedOnly.Load()
}

// ProjectTrusted reports whether the rules were last loaded with the
// project trusted (LoadOptions.Trusted), that is, whether allow rules in the
// project's files apply. An "always allow" answer written to the local file
// of an untrusted project is saved but ignored until the project is
// trusted. A nil Set reports false.
func (s *Set) ProjectTrusted() bool {
	return s != nil && s.trusted.Load()
}

// index is an immutable, compiled view of a Set's rules, organised so that
// Decide looks up the few rules that can cover an id instead of trying all
// of them: literal patterns sit in maps keyed by what they must equal,
// globs in short lists by kind.
type index struct {
	rules   []Rule
	reasons []string  // Decision.Reason of each rule
	pats    []pattern // compiled, parallel to rules

	all          []int            // "*"
	builtinExact map[string][]int // built-in name → rules
	builtinGlob  []int
	serverExact  map[string][]int // "mcp__<server>" with a literal server
	serverGlob   []int            // "mcp", "mcp__*", "mcp__git*"
	toolExact    map[string][]int // whole literal "mcp__<server>__<tool>"
	toolByServer map[string][]int // literal server, glob tool
	toolGlob     []int            // glob server
	// aliasExact holds the literal MCP patterns shaped like an alias
	// (toolid.LooksLikeAlias), by their text: only they can name a tool
	// by its alias.
	aliasExact map[string][]int
}

// buildIndex indexes rules, in Rules order; message is the organization's
// text for its refusals (LoadOptions.ManagedMessage).
func buildIndex(rules []Rule, message string) *index {
	n := len(rules)
	x := &index{
		rules:        make([]Rule, 0, n),
		reasons:      make([]string, 0, n),
		pats:         make([]pattern, 0, n),
		builtinExact: make(map[string][]int),
		serverExact:  make(map[string][]int),
		toolExact:    make(map[string][]int),
		toolByServer: make(map[string][]int),
		aliasExact:   make(map[string][]int),
	}
	for _, r := range rules {
		p, _, err := compile(r.Pattern)
		if err != nil {
			continue // the loader and AllowSession only pass valid rules
		}
		i := len(x.rules)
		x.rules = append(x.rules, r)
		x.reasons = append(x.reasons, r.reason(message))
		x.pats = append(x.pats, p)
		switch {
		case p.kind == kindAll:
			x.all = append(x.all, i)
		case p.kind == kindBuiltin && p.literal:
			x.builtinExact[p.text] = append(x.builtinExact[p.text], i)
		case p.kind == kindBuiltin:
			x.builtinGlob = append(x.builtinGlob, i)
		case p.kind == kindServer && !p.server.star:
			x.serverExact[p.server.s] = append(x.serverExact[p.server.s], i)
		case p.kind == kindServer:
			x.serverGlob = append(x.serverGlob, i)
		case p.kind == kindTool && p.literal:
			x.toolExact[p.text] = append(x.toolExact[p.text], i)
		case p.kind == kindTool && !p.server.star:
			x.toolByServer[p.server.s] = append(x.toolByServer[p.server.s], i)
		default:
			x.toolGlob = append(x.toolGlob, i)
		}
		if (p.kind == kindTool || p.kind == kindServer) && p.literal && toolid.LooksLikeAlias(p.text) {
			x.aliasExact[p.text] = append(x.aliasExact[p.text], i)
		}
	}
	return x
}

// decide returns the index of the deciding rule for the tool with this id
// and alias, or -1.
func (x *index) decide(id, alias string) int {
	b := best{x: x, i: -1}
	for _, i := range x.all {
		b.offer(i, true)
	}
	if !strings.HasPrefix(id, toolid.Prefix) {
		for _, i := range x.builtinExact[id] {
			b.offer(i, true)
		}
		for _, i := range x.builtinGlob {
			if x.pats[i].name.match(id) {
				b.offer(i, true)
			}
		}
		return b.i
	}
	for _, i := range x.toolExact[id] {
		b.offer(i, true)
	}
	if len(id) > toolid.MaxNameLen && len(x.aliasExact) > 0 {
		x.offerAliases(&b, id, alias)
	}
	rs, n := toolid.Readings(id)
	for k, r := range rs[:n] {
		// A rule found through one reading is offered with whether it
		// covers every reading, which only an allow rule cares about.
		for _, i := range x.serverExact[r.Server] {
			b.offer(i, x.coversAll(i, rs[:n], k))
		}
		for _, i := range x.serverGlob {
			if x.pats[i].server.match(r.Server) {
				b.offer(i, x.coversAll(i, rs[:n], k))
			}
		}
		if !r.HasTool {
			continue
		}
		for _, i := range x.toolByServer[r.Server] {
			if x.pats[i].tool.match(r.Tool) {
				b.offer(i, x.coversAll(i, rs[:n], k))
			}
		}
		for _, i := range x.toolGlob {
			if x.pats[i].matchReading(r) {
				b.offer(i, x.coversAll(i, rs[:n], k))
			}
		}
	}
	return b.i
}

// offerAliases offers the rules that name the tool by an alias: its
// alias, under every effect; and, for deny and ask rules, toolid.Alias(id),
// the alias it has unless another tool's id took that name. A server that
// adds a tool named like a denied tool's alias moves that tool to another
// alias, and must not thereby take it out of the deny rule the user wrote
// with the old one.
func (x *index) offerAliases(b *best, id, alias string) {
	for _, i := range x.aliasExact[alias] {
		b.offer(i, true)
	}
	var buf [toolid.MaxNameLen]byte
	natural := toolid.AppendAlias(buf[:0], id)
	if string(natural) == alias {
		return
	}
	for _, i := range x.aliasExact[string(natural)] {
		if x.rules[i].Effect != Allow {
			b.offer(i, true)
		}
	}
}

// coversAll reports whether rule i, known to cover reading k, covers the
// other readings too. Only allow rules need it.
func (x *index) coversAll(i int, rs []toolid.Reading, k int) bool {
	if x.rules[i].Effect != Allow {
		return true
	}
	for j, r := range rs {
		if j != k && !x.pats[i].matchReading(r) {
			return false
		}
	}
	return true
}

// best keeps the deciding rule: the highest effect, then the first rule.
type best struct {
	x *index
	i int
}

// offer proposes rule i; all says whether it covers every reading of the
// id. An allow rule that covers only some readings does not apply.
func (b *best) offer(i int, all bool) {
	e := b.x.rules[i].Effect
	if e == Allow && !all {
		return
	}
	if b.i < 0 {
		b.i = i
		return
	}
	be := b.x.rules[b.i].Effect
	if e > be || e == be && i < b.i {
		b.i = i
	}
}
