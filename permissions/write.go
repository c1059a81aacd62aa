package permissions

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

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

// AddScopeAllow writes pattern as an allow rule into the file of scope
// (SourceUser or SourceLocal, an "always allow" answer's choice) and returns
// the file's path. It is AddAllow after ScopeFile, with one more check for
// the project's files: they must really be inside the project. A cloned
// repository could ship .freecode/settings.local.json (or .freecode itself)
// as a symbolic link to the user's settings file; AddAllow edits a linked
// file where it lives, so "always allow for this project" would otherwise
// become a rule for every project.
//
// In a trusted project the rule is the user's answer, not a change by
// another hand: it joins the rules the user accepted (Accepted) before it
// is written, so that no load in between holds it back for review.
//
// It writes whatever the rules in force would make of the rule: whether it
// could apply at all (no deny or ask rule covers the tool, the
// organization does not allow only its own allow rules) is its caller's
// question, and the orchestrator writes no answer that the organization's
// rules leave without effect.
func AddScopeAllow(scope Source, userDir, projectDir, pattern string) (string, error) {
	path, err := ScopeFile(scope, userDir, projectDir)
	if err != nil {
		return "", err
	}
	if scope != SourceProject && scope != SourceLocal {
		return path, AddAllow(path, pattern)
	}
	if err := checkInside(projectDir, path); err != nil {
		return path, err
	}
	_, p, err := compile(pattern)
	if err != nil {
		return path, fmt.Errorf("adding allow rule %q: %w", pattern, err)
	}
	undo, err := acceptAllow(projectDir, scope, p)
	if err != nil {
		return path, err
	}
	if err := AddAllow(path, p); err != nil {
		undo()
		return path, err
	}
	return path, nil
}

// RemoveScopeAllow takes an "always allow" answer back (the user's Undo):
// it removes the allow rule pattern from the file of scope (SourceUser or
// SourceLocal, as AddScopeAllow wrote it) and, of the project's files,
// from the rules the user accepted, so that the same rule written there
// later by another hand awaits their review again. It returns the file's
// path and whether the file held the rule; a file that does not exist is
// not created.
func RemoveScopeAllow(scope Source, userDir, projectDir, pattern string) (string, bool, error) {
	path, err := ScopeFile(scope, userDir, projectDir)
	if err != nil {
		return "", false, err
	}
	_, p, err := compile(pattern)
	if err != nil {
		return path, false, fmt.Errorf("removing allow rule %q: %w", pattern, err)
	}
	project := scope == SourceProject || scope == SourceLocal
	if project {
		if err := checkInside(projectDir, path); err != nil {
			return path, false, err
		}
	}
	removed := false
	if _, err := os.Lstat(path); err == nil {
		if removed, err = RemoveAllow(path, p); err != nil {
			return path, false, err
		}
	}
	// After the file: a load in between finds the rule gone, never in the
	// file and no longer accepted, which would hold it back for review.
	if project {
		if err := forgetAllow(projectDir, scope, p); err != nil {
			return path, removed, err
		}
	}
	return path, removed, nil
}

// RemoveAllow removes the allow rule pattern from the rule file at path,
// every entry of permissions.allow that is pattern once trimmed, and
// reports whether there was one. It edits through config.UpdateFile as
// AddAllow does: the rest of the file is kept byte for byte, and so is a
// comment on the line of the entry before (it stays with that entry).
func RemoveAllow(path, pattern string) (bool, error) {
	_, p, err := compile(pattern)
	if err != nil {
		return false, fmt.Errorf("removing allow rule %q: %w", pattern, err)
	}
	var removed bool
	err = config.UpdateFile(path, func(root *hujson.Value) error {
		removed = false // UpdateFile may run this again on what another program wrote
		arr := allowList(root)
		if arr == nil {
			return nil
		}
		for i := len(arr.Elements) - 1; i >= 0; i-- {
			if lit, ok := arr.Elements[i].Value.(hujson.Literal); ok && lit.Kind() == '"' {
				if _, q, err := compile(lit.String()); err == nil && q == p {
					removeElement(arr, i)
					removed = true
				}
			}
		}
		return nil
	})
	if err != nil {
		var pe *config.ParseError
		if !errors.As(err, &pe) {
			err = fmt.Errorf("removing allow rule from %s: %w", path, err)
		}
		return false, err
	}
	return removed, nil
}

// allowList returns root's permissions.allow, nil when it has none (or it
// is not a list).
func allowList(root *hujson.Value) *hujson.Array {
	// A key given twice: the loader refuses such a file, so there is no
	// rule in force to take back.
	dup := func(_, _ *hujson.ObjectMember) error { return errors.New("duplicate key") }
	top, ok := root.Value.(*hujson.Object)
	if !ok {
		return nil
	}
	perms, err := member(top, "permissions", dup)
	if err != nil || perms == nil {
		return nil
	}
	obj, ok := perms.Value.(*hujson.Object)
	if !ok {
		return nil
	}
	allow, err := member(obj, "allow", dup)
	if err != nil || allow == nil {
		return nil
	}
	arr, _ := allow.Value.(*hujson.Array)
	return arr
}

// removeElement removes element i of arr, keeping the layout of what is
// left: a comment on the line of the element before, which sits after its
// comma and so before element i, stays; element i's own (on its line,
// after its comma) goes with it; a trailing comma after the last element
// stays or stays away as it was.
func removeElement(arr *hujson.Array, i int) {
	els := arr.Elements
	gone := els[i]
	lead := lineComment(gone.BeforeExtra)
	switch {
	case i < len(els)-1:
		next := &els[i+1]
		if i == 0 && !bytes.ContainsRune(next.BeforeExtra, '\n') {
			// A one-line list: the next is first now, spaced as the first was.
			next.BeforeExtra = gone.BeforeExtra
		} else {
			next.BeforeExtra = append(lead, dropLineComment(next.BeforeExtra)...)
		}
	default:
		arr.AfterExtra = append(lead, dropLineComment(arr.AfterExtra)...)
		if i > 0 {
			prev := &els[i-1]
			// hujson: a last element with AfterExtra set has a trailing comma.
			switch {
			case gone.AfterExtra == nil && len(prev.AfterExtra) == 0:
				prev.AfterExtra = nil
			case gone.AfterExtra != nil && prev.AfterExtra == nil:
				prev.AfterExtra = hujson.Extra{}
			}
		}
	}
	arr.Elements = slices.Delete(els, i, i+1)
}

// lineComment returns the comment that opens x on the line it starts on
// (" // why" of " // why\n  "), nil when the line holds none.
func lineComment(x hujson.Extra) hujson.Extra {
	nl := bytes.IndexByte(x, '\n')
	if nl <= 0 || !bytes.ContainsRune(x[:nl], '/') {
		return nil
	}
	return append(hujson.Extra{}, x[:nl]...)
}

// dropLineComment returns x without the comment on the line it starts on.
func dropLineComment(x hujson.Extra) hujson.Extra {
	if c := lineComment(x); c != nil {
		return append(hujson.Extra{}, x[len(c):]...)
	}
	return append(hujson.Extra{}, x...)
}

// checkInside reports an error unless path, once symbolic links are
// resolved (of its parent when it does not exist yet), lies inside dir.
func checkInside(dir, path string) error {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		if _, lerr := os.Lstat(path); lerr == nil {
			// A dangling link: where it points could be created anywhere.
			return fmt.Errorf("%s is a symbolic link to a missing file; refusing to write through it", path)
		}
		parent := filepath.Dir(path)
		if real, err = filepath.EvalSymlinks(parent); errors.Is(err, fs.ErrNotExist) {
			if _, lerr := os.Lstat(parent); lerr == nil {
				return fmt.Errorf("%s is a symbolic link to a missing directory; refusing to write through it", parent)
			}
			real, err = filepath.EvalSymlinks(filepath.Dir(parent))
			real = filepath.Join(real, filepath.Base(parent))
		}
		real = filepath.Join(real, filepath.Base(path))
	}
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("%s resolves to %s, outside the project %s; refusing to write a project rule there", path, real, root)
	}
	return nil
}

// AddAllow writes pattern as an allow rule into the rule file at path
// (an "always allow" answer): it appends to permissions.allow, creating
// the file, the "permissions" object or the list if missing, and does
// nothing if the rule is already there. It edits through config.UpdateFile:
// every other byte of the file (other keys, their order, comments,
// formatting) is kept, the new rule is laid out like its neighbours, a
// symlinked file is edited where it lives, the write is atomic, and the
// file's lock is held throughout, so that "always allow" answers written
// at once by several processes (or goroutines) are all kept. A file
// that does not parse is left alone and the error (a *config.ParseError)
// names its line and column.
//
// A rule added to an untrusted project's local file is ignored like its
// other allow rules until the project is trusted.
func AddAllow(path, pattern string) error {
	_, p, err := compile(pattern)
	if err != nil {
		return fmt.Errorf("adding allow rule %q: %w", pattern, err)
	}
	err = config.UpdateFile(path, func(root *hujson.Value) error { return addAllow(root, p) })
	var pe *config.ParseError
	if err != nil && !errors.As(err, &pe) {
		return fmt.Errorf("adding allow rule to %s: %w", path, err)
	}
	return err
}

// addAllow appends p to root's permissions.allow, creating what is
// missing. New nodes are left without whitespace for UpdateFile to lay out.
func addAllow(root *hujson.Value, p string) error {
	top, ok := root.Value.(*hujson.Object)
	if !ok {
		return errors.New("the file does not hold a JSON object")
	}
	perms, err := member(top, "permissions", func(_, _ *hujson.ObjectMember) error {
		return errors.New(`duplicate key "permissions"`)
	})
	if err != nil {
		return err
	}
	if perms == nil {
		top.Members = append(top.Members, hujson.ObjectMember{
			Name: hujson.Value{Value: hujson.String("permissions")},
			Value: hujson.Value{Value: &hujson.Object{Members: []hujson.ObjectMember{{
				Name:  hujson.Value{Value: hujson.String("allow")},
				Value: hujson.Value{Value: stringArray(p)},
			}}}},
		})
		return nil
	}
	obj, ok := perms.Value.(*hujson.Object)
	if !ok {
		return errors.New(`"permissions" is not an object`)
	}
	allow, err := member(obj, "allow", func(_, _ *hujson.ObjectMember) error {
		return errors.New(`duplicate key "allow" in "permissions"`)
	})
	if err != nil {
		return err
	}
	if allow == nil {
		name := hujson.Value{BeforeExtra: keepLineComment(&obj.AfterExtra), Value: hujson.String("allow")}
		obj.Members = append(obj.Members, hujson.ObjectMember{Name: name, Value: hujson.Value{Value: stringArray(p)}})
		return nil
	}
	arr, ok := allow.Value.(*hujson.Array)
	if !ok {
		return errors.New(`"permissions.allow" is not a list`)
	}
	for _, el := range arr.Elements {
		if lit, ok := el.Value.(hujson.Literal); ok && lit.Kind() == '"' {
			if _, q, err := compile(lit.String()); err == nil && q == p {
				return nil // already there: UpdateFile writes nothing
			}
		}
	}
	arr.Elements = append(arr.Elements, hujson.Value{BeforeExtra: keepLineComment(&arr.AfterExtra), Value: hujson.String(p)})
	return nil
}

func stringArray(s string) *hujson.Array {
	return &hujson.Array{Elements: []hujson.Value{{Value: hujson.String(s)}}}
}

// keepLineComment keeps a comment on the line of a container's last entry
// (`"read" // why` before the closing bracket) with that entry: it moves the
// comment out of the text before the closing bracket and returns it, to go
// before the new entry, after the comma.
func keepLineComment(closing *hujson.Extra) hujson.Extra {
	nl := bytes.IndexByte(*closing, '\n')
	if nl <= 0 || !bytes.ContainsRune((*closing)[:nl], '/') {
		return nil
	}
	lead := append(hujson.Extra{}, (*closing)[:nl]...)
	*closing = (*closing)[nl:]
	return lead
}
