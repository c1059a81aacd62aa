package permissions

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/freecode/freecode/config"
	"github.com/tailscale/hujson"
)

// The settings files' names.
const (
	SettingsFile      = "settings.json"       // in ~/.freecode and <project>/.freecode
	LocalSettingsFile = "settings.local.json" // in <project>/.freecode
	projectDirName    = ".freecode"
)

// LoadOptions says which rule files to load.
type LoadOptions struct {
	// UserFile is the user's rule file, normally ~/.freecode/settings.json;
	// "" loads none.
	UserFile string
	// ProjectDir is the project root: its .freecode/settings.json (project)
	// and .freecode/settings.local.json (local) are loaded; "" loads none.
	// A project whose settings.json is UserFile (the project is the home
	// directory) has it loaded once, as the user's: its rules are not
	// counted twice, nor held to the project's trust.
	ProjectDir string
	// Trusted says the user trusts the project. Until then its two files
	// can only restrict: their deny and ask rules apply, their allow rules
	// are ignored and reported as warnings.
	Trusted bool
	// Accepted, with Trusted, is what the user accepted of the project's
	// two files (ReadAccepted). Each file then applies as accepted and as
	// far as it tightens, never looser: an allow rule not accepted is
	// ignored and reported, an accepted deny or ask rule that the file no
	// longer has is still enforced and reported, and both are in
	// Set.Pending until the user accepts them (Accept). A new deny or ask
	// rule, or an allow rule taken out, applies at once. Nil means no
	// record: every rule of a trusted project applies.
	Accepted *Accepted

	// Managed are the organization's rules (config.Managed.Permissions),
	// which the config package reads from the managed settings files:
	// compiled as the files' rules are, they come first in Rules order,
	// with SourceManaged and File the managed file. No rule of another
	// source, no session allow and no answer loosens a managed deny or ask
	// rule. An invalid one is skipped with a Warning at its position.
	Managed []config.ManagedRule
	// ManagedOnly is allowManagedPermissionRulesOnly
	// (config.Managed.ManagedRulesOnly): the allow rules of every other
	// file are ignored, each with a Warning, and so are the session's
	// (Set.AllowSession refuses them).
	ManagedOnly bool
	// ManagedPath is the managed settings file those warnings name as the
	// one that set ManagedOnly (normally config.Managed.Files[0]); ""
	// names none.
	ManagedPath string
	// ManagedMessage is the organization's text for its refusals
	// (config.Managed.Message): a managed deny rule's Decision.Reason ends
	// with it, after " — ".
	ManagedMessage string
}

// Warning is a problem in a rule file that does not stop the rest of the
// file from applying: a rule that is ignored, a key that is unknown, or an
// accepted rule the file lost that is still enforced.
type Warning struct {
	Path      string
	Line, Col int    // 1-based position of the rule or key; 0 for a rule the file lost
	Effect    Effect // the rule's list; 0 for a key warning or a rule the file lost
	Pattern   string // the rule as written; "" for a key warning
	Msg       string // why it is ignored
}

// String formats the warning for a log or window/logMessage, e.g.
// `ignored allow rule "mcp__*" in /p/.freecode/settings.json:3:14: project
// not trusted; run `freecode trust“.
func (w Warning) String() string {
	at := w.Path
	if w.Line > 0 {
		at = fmt.Sprintf("%s:%d:%d", w.Path, w.Line, w.Col)
	}
	if w.Effect == 0 {
		return fmt.Sprintf("%s: %s", at, w.Msg)
	}
	return fmt.Sprintf("ignored %s rule %q in %s: %s", w.Effect, w.Pattern, at, w.Msg)
}

// Load reads the rule files opts names. Missing files have no rules. A file
// that cannot be read or does not parse, or whose permissions are not
// lists of strings, is an error naming it (a *config.ParseError with line
// and column when it is the content); rules that are ignored come back as
// warnings.
//
// Load always returns a Set: on error it holds the rules of the files that
// did load, so a broken project file cannot take the user's deny rules
// away. A caller that has a last good Set should keep it, or better call
// its Reload, which keeps the last good rules of each broken file.
func Load(opts LoadOptions) (*Set, []Warning, error) {
	s := &Set{}
	warnings, err := s.Reload(opts)
	return s, warnings, err
}

// fileRules is one rule file's outcome.
type fileRules struct {
	path  string
	rules []Rule
	err   error
	// held are the accepted deny and ask rules of a file that did not
	// load (err): enforced whatever the file last held.
	held []Rule
}

// ruleFile is a rule file to load.
type ruleFile struct {
	path   string
	source Source
}

// ruleFiles returns the rule files opts names, the user's first.
func ruleFiles(opts LoadOptions) []ruleFile {
	var files []ruleFile
	if opts.UserFile != "" {
		files = append(files, ruleFile{opts.UserFile, SourceUser})
	}
	if opts.ProjectDir != "" {
		dir := filepath.Join(opts.ProjectDir, projectDirName)
		if project := filepath.Join(dir, SettingsFile); opts.UserFile == "" || !config.SameFile(project, opts.UserFile) {
			files = append(files, ruleFile{project, SourceProject})
		}
		files = append(files, ruleFile{filepath.Join(dir, LocalSettingsFile), SourceLocal})
	}
	return files
}

// The warnings of a trusted project's file that loosened.
const (
	msgUntrusted = "project not trusted; run `freecode trust`"
	msgAwaits    = "added since you accepted this project's rules, it awaits your review: run `freecode trust`, or accept it in the editor"
)

func loadFiles(opts LoadOptions) ([]fileRules, *Pending, []Warning, error) {
	var out []fileRules
	var warnings []Warning
	var errs []error
	// With a record, the rules as read, for the hash of what accepting
	// them records, and how they loosened.
	var current Accepted
	var changes []FileChange
	for _, f := range ruleFiles(opts) {
		var admit func(Effect, string) string
		var accepted *RuleLists
		switch {
		case f.source == SourceUser:
		case !opts.Trusted:
			admit = func(e Effect, _ string) string {
				if e == Allow {
					return msgUntrusted
				}
				return ""
			}
		case opts.Accepted != nil:
			accepted = opts.Accepted.lists(f.source)
			admit = func(e Effect, p string) string {
				if e == Allow && !accepted.has(Allow, p) {
					return msgAwaits
				}
				return ""
			}
		}
		if opts.ManagedOnly {
			// Before trust and review: neither would let the rule apply.
			admit = managedOnly(opts.ManagedPath, admit)
		}
		fr := fileRules{path: f.path}
		var lists RuleLists
		data, err := config.ReadFile(f.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			fr.err = fmt.Errorf("reading rules: %w", err)
		default:
			var ws []Warning
			fr.rules, lists, ws, fr.err = parseFile(f.path, data, f.source, admit)
			warnings = append(warnings, ws...)
		}
		if fr.err != nil {
			errs = append(errs, fr.err)
		}
		if accepted != nil {
			if fr.err != nil {
				// What the file holds is not known: its accepted deny and
				// ask rules hold whatever it last held, and accepting now
				// keeps what was accepted of it.
				lists = *accepted
				for _, e := range []Effect{Deny, Ask} {
					for _, p := range *accepted.list(e) {
						fr.held = append(fr.held, Rule{Pattern: p, Effect: e, Source: f.source, File: f.path})
					}
				}
			} else {
				c := FileChange{Path: f.path, Source: f.source, Allow: missing(lists.Allow, accepted.Allow)}
				var ws []Warning
				for _, e := range []Effect{Deny, Ask} {
					gone := missing(*accepted.list(e), *lists.list(e))
					*c.list(e) = gone
					for _, p := range gone {
						fr.rules = append(fr.rules, Rule{Pattern: p, Effect: e, Source: f.source, File: f.path})
						ws = append(ws, Warning{Path: f.path, Msg: fmt.Sprintf(
							"%s rule %q, which you accepted, is no longer in the file; it is still enforced until you accept the change: run `freecode trust`, or accept it in the editor", e, p)})
					}
				}
				if len(ws) > maxWarnings {
					ws = append(ws[:maxWarnings], Warning{Path: f.path,
						Msg: fmt.Sprintf("%d more rules you accepted are no longer in the file and still enforced, not shown", len(ws)-maxWarnings)})
				}
				warnings = append(warnings, ws...)
				if len(c.Allow)+len(c.Ask)+len(c.Deny) > 0 {
					changes = append(changes, c)
				}
			}
			*current.lists(f.source) = lists
		}
		out = append(out, fr)
	}
	var pending *Pending
	if len(changes) > 0 {
		pending = &Pending{Hash: current.Hash(), Files: changes}
	}
	return out, pending, warnings, errors.Join(errs...)
}

// list returns the list of effect e of the change.
func (c *FileChange) list(e Effect) *[]string {
	switch e {
	case Allow:
		return &c.Allow
	case Ask:
		return &c.Ask
	}
	return &c.Deny
}

// parseFile reads the "permissions" object of one settings file. Other
// top-level keys belong to other parts of FreeCode and are not looked at.
// It returns the rules admit lets through (admit, if not nil, returns why
// a valid rule is ignored, or ""), and every valid rule as lists.
func parseFile(path string, data []byte, src Source, admit func(Effect, string) string) ([]Rule, RuleLists, []Warning, error) {
	var lists RuleLists
	root, err := config.ParseJSONC(path, data)
	if err != nil {
		return nil, lists, nil, err
	}
	bad := func(v *hujson.Value, format string, args ...any) error {
		line, col := lineCol(data, v.StartOffset)
		return &config.ParseError{Path: path, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
	}
	top, ok := root.Value.(*hujson.Object)
	if !ok {
		return nil, lists, nil, bad(&root, "a settings file must hold a JSON object")
	}
	// A key written twice is refused, not taken as JSON decoders take it
	// (the last one): a rule file that is unclear about its deny list
	// must not half apply.
	firstAt := func(first *hujson.ObjectMember) string {
		line, col := lineCol(data, first.Name.StartOffset)
		return fmt.Sprintf("the first is at line %d, column %d", line, col)
	}
	perms, err := member(top, "permissions", func(first, again *hujson.ObjectMember) error {
		return bad(&again.Name, "duplicate key \"permissions\" (%s)", firstAt(first))
	})
	if err != nil || perms == nil {
		return nil, lists, nil, err
	}
	obj, ok := perms.Value.(*hujson.Object)
	if !ok {
		return nil, lists, nil, bad(perms, "\"permissions\" must be an object with allow, ask and deny lists")
	}
	members := map[Effect]*hujson.ObjectMember{}
	var warnings []Warning
	for i := range obj.Members {
		m := &obj.Members[i]
		name := m.Name.Value.(hujson.Literal).String()
		var e Effect
		switch name {
		case "allow":
			e = Allow
		case "ask":
			e = Ask
		case "deny":
			e = Deny
		default:
			line, col := lineCol(data, m.Name.StartOffset)
			warnings = append(warnings, Warning{Path: path, Line: line, Col: col,
				Msg: fmt.Sprintf("unknown key %q in \"permissions\" ignored (known: allow, ask, deny)", name)})
			continue
		}
		if first := members[e]; first != nil {
			return nil, lists, warnings, bad(&m.Name, "duplicate key %q in \"permissions\" (%s)", name, firstAt(first))
		}
		members[e] = m
	}
	var rules []Rule
	for _, e := range []Effect{Deny, Ask, Allow} {
		if members[e] == nil {
			continue
		}
		v := &members[e].Value
		arr, ok := v.Value.(*hujson.Array)
		if !ok {
			return nil, lists, warnings, bad(v, "\"permissions.%s\" must be a list of strings", e)
		}
		for j := range arr.Elements {
			el := &arr.Elements[j]
			lit, ok := el.Value.(hujson.Literal)
			if !ok || lit.Kind() != '"' {
				return nil, lists, warnings, bad(el, "\"permissions.%s\" must be a list of strings", e)
			}
			raw := lit.String()
			line, col := lineCol(data, el.StartOffset)
			warn := func(msg string) {
				warnings = append(warnings, Warning{Path: path, Line: line, Col: col, Effect: e, Pattern: raw, Msg: msg})
			}
			_, p, err := compile(raw)
			if err != nil {
				warn(err.Error())
				continue
			}
			lists.add(e, p)
			if admit != nil {
				if why := admit(e, p); why != "" {
					warn(why)
					continue
				}
			}
			rules = append(rules, Rule{Pattern: p, Effect: e, Source: src, File: path})
		}
	}
	if len(warnings) > maxWarnings {
		more := warnings[maxWarnings]
		warnings = append(warnings[:maxWarnings], Warning{Path: path, Line: more.Line, Col: more.Col,
			Msg: fmt.Sprintf("%d more problems from here on not shown", len(warnings)-maxWarnings)})
	}
	return rules, lists, warnings, nil
}

// maxWarnings bounds the warnings of one file, which a frontend may show
// one by one.
const maxWarnings = 20

// member returns the value of obj's member name, or nil; a second member
// of that name is an error, dup's (JSON decoders disagree on which one
// wins), given the first and the second.
func member(obj *hujson.Object, name string, dup func(first, again *hujson.ObjectMember) error) (*hujson.Value, error) {
	var first *hujson.ObjectMember
	for i := range obj.Members {
		m := &obj.Members[i]
		if m.Name.Value.(hujson.Literal).String() != name {
			continue
		}
		if first != nil {
			return nil, dup(first, m)
		}
		first = m
	}
	if first == nil {
		return nil, nil
	}
	return &first.Value, nil
}

// lineCol turns a byte offset into a 1-based line and column (in bytes).
func lineCol(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	line = 1 + bytes.Count(data[:off], []byte("\n"))
	col = 1 + off - (bytes.LastIndexByte(data[:off], '\n') + 1)
	return line, col
}
