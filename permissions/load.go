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
}

// Warning is a problem in a rule file that does not stop the rest of the
// file from applying: a rule that is ignored, or a key that is unknown.
type Warning struct {
	Path      string
	Line, Col int    // 1-based position of the rule or key
	Effect    Effect // the rule's list; 0 for a key warning
	Pattern   string // the rule as written; "" for a key warning
	Msg       string // why it is ignored
}

// String formats the warning for a log or window/logMessage, e.g.
// `ignored allow rule "mcp__*" in /p/.freecode/settings.json:3:14: project
// not trusted; run `freecode trust“.
func (w Warning) String() string {
	if w.Effect == 0 {
		return fmt.Sprintf("%s:%d:%d: %s", w.Path, w.Line, w.Col, w.Msg)
	}
	return fmt.Sprintf("ignored %s rule %q in %s:%d:%d: %s", w.Effect, w.Pattern, w.Path, w.Line, w.Col, w.Msg)
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
	files, warnings, err := loadFiles(opts)
	s := &Set{}
	s.setFiles(files)
	s.trusted.Store(opts.Trusted)
	return s, warnings, err
}

// fileRules is one rule file's outcome.
type fileRules struct {
	path  string
	rules []Rule
	err   error
}

func loadFiles(opts LoadOptions) ([]fileRules, []Warning, error) {
	type file struct {
		path    string
		source  Source
		trusted bool
	}
	var files []file
	if opts.UserFile != "" {
		files = append(files, file{opts.UserFile, SourceUser, true})
	}
	if opts.ProjectDir != "" {
		dir := filepath.Join(opts.ProjectDir, projectDirName)
		if project := filepath.Join(dir, SettingsFile); opts.UserFile == "" || !config.SameFile(project, opts.UserFile) {
			files = append(files, file{project, SourceProject, opts.Trusted})
		}
		files = append(files, file{filepath.Join(dir, LocalSettingsFile), SourceLocal, opts.Trusted})
	}
	var out []fileRules
	var warnings []Warning
	var errs []error
	for _, f := range files {
		fr := fileRules{path: f.path}
		data, err := config.ReadFile(f.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			fr.err = fmt.Errorf("reading rules: %w", err)
		default:
			var ws []Warning
			fr.rules, ws, fr.err = parseFile(f.path, data, f.source, f.trusted)
			warnings = append(warnings, ws...)
		}
		if fr.err != nil {
			errs = append(errs, fr.err)
		}
		out = append(out, fr)
	}
	return out, warnings, errors.Join(errs...)
}

// parseFile reads the "permissions" object of one settings file. Other
// top-level keys belong to other parts of FreeCode and are not looked at.
func parseFile(path string, data []byte, src Source, trusted bool) ([]Rule, []Warning, error) {
	root, err := config.ParseJSONC(path, data)
	if err != nil {
		return nil, nil, err
	}
	bad := func(v *hujson.Value, format string, args ...any) error {
		line, col := lineCol(data, v.StartOffset)
		return &config.ParseError{Path: path, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
	}
	top, ok := root.Value.(*hujson.Object)
	if !ok {
		return nil, nil, bad(&root, "a settings file must hold a JSON object")
	}
	perms, err := member(top, "permissions", func(m *hujson.ObjectMember) error {
		return bad(&m.Name, "duplicate key \"permissions\"")
	})
	if err != nil || perms == nil {
		return nil, nil, err
	}
	obj, ok := perms.Value.(*hujson.Object)
	if !ok {
		return nil, nil, bad(perms, "\"permissions\" must be an object with allow, ask and deny lists")
	}
	lists := map[Effect]*hujson.Value{}
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
		if lists[e] != nil {
			return nil, warnings, bad(&m.Name, "duplicate key %q in \"permissions\"", name)
		}
		lists[e] = &m.Value
	}
	var rules []Rule
	for _, e := range []Effect{Deny, Ask, Allow} {
		v := lists[e]
		if v == nil {
			continue
		}
		arr, ok := v.Value.(*hujson.Array)
		if !ok {
			return nil, warnings, bad(v, "\"permissions.%s\" must be a list of strings", e)
		}
		for j := range arr.Elements {
			el := &arr.Elements[j]
			lit, ok := el.Value.(hujson.Literal)
			if !ok || lit.Kind() != '"' {
				return nil, warnings, bad(el, "\"permissions.%s\" must be a list of strings", e)
			}
			raw := lit.String()
			line, col := lineCol(data, el.StartOffset)
			warn := func(msg string) {
				warnings = append(warnings, Warning{Path: path, Line: line, Col: col, Effect: e, Pattern: raw, Msg: msg})
			}
			_, p, err := compile(raw)
			switch {
			case err != nil:
				warn(err.Error())
			case e == Allow && !trusted:
				warn("project not trusted; run `freecode trust`")
			default:
				rules = append(rules, Rule{Pattern: p, Effect: e, Source: src, File: path})
			}
		}
	}
	if len(warnings) > maxWarnings {
		more := warnings[maxWarnings]
		warnings = append(warnings[:maxWarnings], Warning{Path: path, Line: more.Line, Col: more.Col,
			Msg: fmt.Sprintf("%d more problems from here on not shown", len(warnings)-maxWarnings)})
	}
	return rules, warnings, nil
}

// maxWarnings bounds the warnings of one file, which a frontend may show
// one by one.
const maxWarnings = 20

// member returns the value of obj's member name, or nil; a second member
// of that name is an error (JSON decoders disagree on which one wins).
func member(obj *hujson.Object, name string, dup func(*hujson.ObjectMember) error) (*hujson.Value, error) {
	var v *hujson.Value
	for i := range obj.Members {
		m := &obj.Members[i]
		if m.Name.Value.(hujson.Literal).String() != name {
			continue
		}
		if v != nil {
			return nil, dup(m)
		}
		v = &m.Value
	}
	return v, nil
}

// lineCol turns a byte offset into a 1-based line and column (in bytes).
func lineCol(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	line = 1 + bytes.Count(data[:off], []byte("\n"))
	col = 1 + off - (bytes.LastIndexByte(data[:off], '\n') + 1)
	return line, col
}
