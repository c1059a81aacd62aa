package permissions

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/freecode/freecode/config"
	"github.com/tailscale/hujson"
)

// ScopeFile returns the rule file of a scope: SourceUser is
// <userDir>/settings.json, where userDir is FreeCode's user directory
// (~/.freecode, the one holding config.json); SourceProject and SourceLocal
// are <projectDir>/.freecode/settings.json and settings.local.json.
// Session rules live in memory and have no file.
func ScopeFile(scope Source, userDir, projectDir string) (string, error) {
	switch scope {
	case SourceUser:
		if userDir == "" {
			return "", errors.New("no user directory for user-scope rules")
		}
		return filepath.Join(userDir, SettingsFile), nil
	case SourceProject, SourceLocal:
		if projectDir == "" {
			return "", fmt.Errorf("no project for %s-scope rules", scope)
		}
		name := SettingsFile
		if scope == SourceLocal {
			name = LocalSettingsFile
		}
		return filepath.Join(projectDir, projectDirName, name), nil
	}
	return "", fmt.Errorf("%s rules have no file", scope)
}

// addMu serializes AddAllow in this process, so that two "always allow"
// answers written to the same file at once are both kept.
var addMu sync.Mutex

// AddAllow writes pattern as an allow rule into the rule file at path
// (an "always allow" answer): it appends to permissions.allow, creating
// the file, the "permissions" object or the list if missing, and does
// nothing if the rule is already there. Every other byte of the file —
// other keys, their order, comments, formatting — is kept, and the write
// is atomic (a reader sees the old file or the new one). A file that does
// not parse is left alone and the error names its line and column.
//
// A rule added to an untrusted project's local file is ignored like its
// other allow rules until the project is trusted.
func AddAllow(path, pattern string) error {
	_, p, err := compile(pattern)
	if err != nil {
		return fmt.Errorf("adding allow rule %q: %w", pattern, err)
	}
	addMu.Lock()
	defer addMu.Unlock()
	// Write through a symlink (settings kept in a dotfiles repository)
	// rather than replace the link with a file.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	data, err := os.ReadFile(path)
	mode := fs.FileMode(0o600)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data = []byte("{\n}\n")
	case err != nil:
		return fmt.Errorf("adding allow rule: %w", err)
	default:
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	root, err := hujson.Parse(data)
	if err != nil {
		return parseError(path, err)
	}
	changed, err := addAllow(&root, p)
	if err != nil {
		return fmt.Errorf("adding allow rule to %s: %w", path, err)
	}
	if !changed {
		return nil
	}
	// Not config.UpdateFile (yet): its layout pass rewrites the closing
	// bracket of untouched multi-line values ("[1,\n2]" becomes
	// "[1,\n2\n]"), and this edit must keep every byte it does not add.
	return config.WriteFileAtomic(path, root.Pack(), mode)
}

// addAllow appends p to root's permissions.allow, creating what is
// missing, and reports whether it changed anything. Only new nodes get new
// whitespace; everything else is left as parsed, so Pack gives back the
// original bytes around the insertion.
func addAllow(root *hujson.Value, p string) (bool, error) {
	top, ok := root.Value.(*hujson.Object)
	if !ok {
		return false, errors.New("the file does not hold a JSON object")
	}
	dup := func(*hujson.ObjectMember) error { return errors.New(`duplicate key "permissions"`) }
	perms, err := member(top, "permissions", dup)
	if err != nil {
		return false, err
	}
	if perms == nil {
		appendMember(top, "permissions", &hujson.Object{Members: []hujson.ObjectMember{{
			Name:  hujson.Value{Value: hujson.String("allow")},
			Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: stringArray(p)},
		}}})
		return true, nil
	}
	obj, ok := perms.Value.(*hujson.Object)
	if !ok {
		return false, errors.New(`"permissions" is not an object`)
	}
	allow, err := member(obj, "allow", func(*hujson.ObjectMember) error {
		return errors.New(`duplicate key "allow" in "permissions"`)
	})
	if err != nil {
		return false, err
	}
	if allow == nil {
		appendMember(obj, "allow", stringArray(p))
		return true, nil
	}
	arr, ok := allow.Value.(*hujson.Array)
	if !ok {
		return false, errors.New(`"permissions.allow" is not a list`)
	}
	for _, el := range arr.Elements {
		if lit, ok := el.Value.(hujson.Literal); ok && lit.Kind() == '"' {
			if _, q, err := compile(lit.String()); err == nil && q == p {
				return false, nil
			}
		}
	}
	before, after := placeNew(elementExtras(arr), arr.AfterExtra)
	arr.AfterExtra = after
	arr.Elements = appendValue(arr.Elements, hujson.Value{BeforeExtra: before, Value: hujson.String(p)})
	return true, nil
}

func stringArray(s string) *hujson.Array {
	return &hujson.Array{Elements: []hujson.Value{{Value: hujson.String(s)}}}
}

// appendMember adds name: v as obj's last member.
func appendMember(obj *hujson.Object, name string, v hujson.ValueTrimmed) {
	names := make([]hujson.Extra, len(obj.Members))
	for i, m := range obj.Members {
		names[i] = m.Name.BeforeExtra
	}
	before, after := placeNew(names, obj.AfterExtra)
	obj.AfterExtra = after
	m := hujson.ObjectMember{
		Name:  hujson.Value{BeforeExtra: before, Value: hujson.String(name)},
		Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: v},
	}
	if n := len(obj.Members); n > 0 && obj.Members[n-1].Value.AfterExtra != nil {
		m.Value.AfterExtra = hujson.Extra{} // keep the trailing comma
	}
	obj.Members = append(obj.Members, m)
}

// appendValue adds v as the last element, keeping a trailing comma.
func appendValue(els []hujson.Value, v hujson.Value) []hujson.Value {
	if n := len(els); n > 0 && els[n-1].AfterExtra != nil {
		v.AfterExtra = hujson.Extra{}
	}
	return append(els, v)
}

func elementExtras(arr *hujson.Array) []hujson.Extra {
	out := make([]hujson.Extra, len(arr.Elements))
	for i, el := range arr.Elements {
		out[i] = el.BeforeExtra
	}
	return out
}

// placeNew returns the whitespace before a new last entry of a container,
// given what precedes its existing entries and what precedes its closing
// bracket, and the new text before the closing bracket. The new entry is
// indented like the last one (or one step deeper than the bracket); in a
// one-line container it is spaced like the last one. A comment on the line
// of the old last entry stays on that line.
func placeNew(befores []hujson.Extra, closing hujson.Extra) (before, after hujson.Extra) {
	after = closing
	nl := bytes.IndexByte(closing, '\n')
	if nl > 0 && bytes.ContainsRune(closing[:nl], '/') {
		before, after = append(before, closing[:nl]...), closing[nl:]
	}
	if n := len(befores); n > 0 {
		last := befores[n-1]
		if k := bytes.LastIndexByte(last, '\n'); k >= 0 {
			return append(append(before, '\n'), leadingSpace(last[k+1:])...), after
		}
		if nl >= 0 {
			// One line of entries, closed on the next line: keep them on it.
			return append(before, ' '), after
		}
		if n == 1 {
			return append(before, ' '), after // ["a"] → ["a", "b"]
		}
		return append(before, leadingSpace(last)...), after
	}
	if nl < 0 {
		return before, after
	}
	closingIndent := leadingSpace(closing[bytes.LastIndexByte(closing, '\n')+1:])
	step := "  "
	if len(closingIndent) > 0 && closingIndent[0] == '\t' {
		step = "\t"
	}
	return append(append(append(before, '\n'), closingIndent...), step...), after
}

// leadingSpace returns the spaces and tabs b starts with.
func leadingSpace(b []byte) []byte {
	n := 0
	for n < len(b) && (b[n] == ' ' || b[n] == '\t') {
		n++
	}
	return b[:n]
}
