package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tailscale/hujson"

	"github.com/freecode/freecode/internal/atomicfile"
	"github.com/freecode/freecode/internal/filelock"
)

// UpdateFile edits the JSON-with-comments file at path in place through fn,
// keeping every byte fn does not touch (other keys, their order, comments,
// whitespace, a leading byte order mark). A missing file starts as "{}".
// If fn returns an error, or the file does not parse, nothing is written;
// nor is it if fn changed nothing. The write is atomic and keeps the
// file's mode (0600 for a new file). Permission rules and config edits
// share it.
//
// The whole read-edit-write holds the file's lock (internal/filelock: its
// directory on Unix, a lock file beside it on Windows), which every
// FreeCode process and goroutine editing the file takes, so no edit undoes
// another. UpdateFile waits up to 20 seconds for it, then fails writing
// nothing.
//
// A program that writes the file without the lock (an editor saving it,
// a script) is caught by atomicfile.WriteIf: the file is checked against
// what was read (the same file, size, time and contents) once the new
// contents are written and synced, right before the rename, and on Linux
// and macOS the file the rename takes out is checked too. The edit is
// then redone on what that program wrote, up to updateTries times.
//
// fn may add values any way hujson allows (Patch is the easy one) without
// caring for whitespace: UpdateFile lays out only the values fn added,
// indented like their neighbours with the file's own indent unit, and never
// reformats the rest of the file.
func UpdateFile(path string, fn func(root *hujson.Value) error) error {
	// A config kept in a dotfiles repository is often a symbolic link:
	// edit the file it points to, rather than replace the link by a copy.
	// Every path to the file then locks the same lock file.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), lockWait,
		fmt.Errorf("gave up after %s; nothing was written, try again", lockWait))
	defer cancel()
	lock, err := filelock.Acquire(ctx, path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer lock.Unlock()
	for try := 1; ; try++ {
		f, err := readForUpdate(path)
		if err != nil {
			return err
		}
		root, err := ParseJSONC(path, f.data)
		if err != nil {
			return err
		}
		markOriginal(&root)
		if err := fn(&root); err != nil {
			return err
		}
		layout(&root, "", indentUnit(f.data))
		out := root.Pack()
		if bytes.Equal(out, f.data) {
			return nil
		}
		if f.bom {
			out = append([]byte(bom), out...)
		}
		if testHookBeforeWrite != nil {
			testHookBeforeWrite()
		}
		err = atomicfile.WriteIf(path, out, f.mode, f.stamp)
		if !errors.Is(err, atomicfile.ErrChanged) {
			return err
		}
		if try == updateTries {
			return fmt.Errorf("%s: another program kept changing it while FreeCode edited it (%d tries); nothing was written, try again", path, updateTries)
		}
	}
}

// testHookBeforeWrite, if set by a test, runs once an edit is made and
// before it is written.
var testHookBeforeWrite func()

// lockWait bounds how long UpdateFile waits for another writer's lock. An
// edit holds it for milliseconds; this is for a writer that hangs. A
// variable for tests.
var lockWait = 20 * time.Second

// updateTries bounds how often UpdateFile makes an edit because the file
// changed under it.
const updateTries = 5

// fileRead is the file to edit as UpdateFile read it.
type fileRead struct {
	data  []byte // without a byte order mark; "{}\n" for a missing file
	bom   bool   // the file began with one
	mode  fs.FileMode
	stamp atomicfile.Stamp // what the file was, to check before the write
}

// readForUpdate reads the file to edit (0600 and "{}" if it does not
// exist yet).
func readForUpdate(path string) (fileRead, error) {
	raw, fi, err := readRaw(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fileRead{data: []byte("{}\n"), mode: 0o600}, nil
	case err != nil:
		return fileRead{}, err
	}
	data, hadBOM := trimBOM(raw)
	return fileRead{data: data, bom: hadBOM, mode: fi.Mode().Perm(), stamp: atomicfile.StampOf(fi, raw)}, nil
}

// WriteFileAtomic writes data to a temporary file in path's directory, syncs
// it and renames it over path, so a reader sees the old file or the new one,
// never a torn one. The directory is created (0700) if missing.
func WriteFileAtomic(path string, data []byte, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, data, mode)
}

// markOriginal tags every value parsed from the file with StartOffset -1.
// Values fn adds later (parsed from a patch, or built by hand) have offsets
// of zero or more, which is how layout tells them apart. Pack ignores
// offsets, so the tag never reaches the file.
func markOriginal(root *hujson.Value) {
	for v := range root.All() {
		// EndOffset keeps how many values v held, so that layout can tell
		// a value fn emptied from one that was empty in the file.
		n := 0
		if vals, _, _ := elems(v); vals != nil {
			n = len(vals)
		}
		v.StartOffset, v.EndOffset = -1, -1-n
	}
}

func isNew(v *hujson.Value) bool { return v.StartOffset >= 0 }

// indentUnit returns the file's indent unit: the leading whitespace of its
// first indented line (in a JSON file that is one level deep), or two spaces.
func indentUnit(data []byte) string {
	for line := range bytes.Lines(data) {
		ws := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
		rest := bytes.TrimSpace(line)
		if len(ws) > 0 && len(rest) > 0 {
			return string(ws)
		}
	}
	return "  "
}

// lineIndent returns the whitespace after the last newline of extra, if
// extra puts what follows at the start of a line.
func lineIndent(extra hujson.Extra) (string, bool) {
	i := bytes.LastIndexByte(extra, '\n')
	if i < 0 {
		return "", false
	}
	ws := extra[i+1:]
	if len(bytes.TrimLeft(ws, " \t")) > 0 {
		return "", false
	}
	return string(ws), true
}

func isBlank(extra hujson.Extra) bool { return len(bytes.TrimSpace(extra)) == 0 }

// setBlank replaces extra with ws, unless it holds a comment: then the
// comment stays and only the whitespace after it becomes ws.
func setBlank(extra *hujson.Extra, ws string) {
	if isBlank(*extra) {
		*extra = hujson.Extra(ws)
		return
	}
	if strings.Contains(ws, "\n") {
		*extra = append(hujson.Extra(bytes.TrimRight(*extra, " \t\r\n")), ws...)
	}
}

// elems returns the values directly inside a composite, with the extra
// that comes before each one on its line (the member name's, for objects).
func elems(v *hujson.Value) (vals []*hujson.Value, before []*hujson.Extra, after *hujson.Extra) {
	switch x := v.Value.(type) {
	case *hujson.Object:
		for i := range x.Members {
			vals = append(vals, &x.Members[i].Value)
			before = append(before, &x.Members[i].Name.BeforeExtra)
		}
		return vals, before, &x.AfterExtra
	case *hujson.Array:
		for i := range x.Elements {
			vals = append(vals, &x.Elements[i])
			before = append(before, &x.Elements[i].BeforeExtra)
		}
		return vals, before, &x.AfterExtra
	}
	return nil, nil, nil
}

// layout walks the values that came from the file, whose line starts at
// indent, and lays out every value fn added inside them.
func layout(v *hujson.Value, indent, unit string) {
	vals, before, after := elems(v)
	if after == nil {
		return
	}
	if len(vals) == 0 {
		emptied := !isNew(v) && v.EndOffset < -1
		if emptied && isBlank(*after) { // emptied by a removal: "[]", not "[\n    ]"
			*after = nil
		}
		return
	}
	allNew, added := true, false
	for _, e := range vals {
		allNew = allNew && isNew(e)
		added = added || isNew(e)
	}
	if allNew { // a value whose contents were replaced, or filled from empty
		layoutNew(v, indent, unit)
		return
	}
	// New members go where their original siblings go.
	multiline := bytes.ContainsRune(*after, '\n')
	childIndent := indent + unit
	for i, e := range vals {
		if ind, ok := lineIndent(*before[i]); ok && !isNew(e) {
			multiline, childIndent = true, ind
			break
		}
	}
	_, isObj := v.Value.(*hujson.Object)
	for i, e := range vals {
		if !isNew(e) {
			ind, ok := lineIndent(*before[i])
			if !ok {
				ind = indent
			}
			layout(e, ind, unit)
			continue
		}
		switch {
		case multiline:
			setBlank(before[i], "\n"+childIndent)
		case i == 0:
			setBlank(before[i], "")
		default:
			// On one line, space a new value like the one before it:
			// ["a","b"] gets ,"c" and ["a", "b"] gets , "c".
			sep := " "
			if prev := *before[i-1]; i > 1 && !isNew(vals[i-1]) && isBlank(prev) && !bytes.ContainsRune(prev, '\n') {
				sep = string(prev)
			}
			setBlank(before[i], sep)
		}
		if isObj {
			v.Value.(*hujson.Object).Members[i].Name.AfterExtra = nil
			setBlank(&e.BeforeExtra, " ")
		}
		if multiline {
			layoutNew(e, childIndent, unit)
		} else {
			layoutNew(e, indent, unit)
		}
	}
	// Keep the file's trailing-comma style when a new value became the last.
	if last := vals[len(vals)-1]; isNew(last) && len(vals) > 1 && vals[len(vals)-2].AfterExtra != nil && isBlank(last.AfterExtra) {
		last.AfterExtra = hujson.Extra{}
	}
	if added && multiline && !bytes.ContainsRune(*after, '\n') {
		setBlank(after, "\n"+indent)
	}
}

// layoutNew lays out a value fn added, whose line starts at indent: one
// member or element a line, except short arrays of scalars (an argv) on one.
func layoutNew(v *hujson.Value, indent, unit string) {
	vals, before, after := elems(v)
	if after == nil {
		return
	}
	if len(vals) == 0 {
		setBlank(after, "")
		return
	}
	_, isObj := v.Value.(*hujson.Object)
	oneLine := !isObj
	width := len(indent)
	for _, e := range vals {
		lit, ok := e.Value.(hujson.Literal)
		oneLine = oneLine && ok
		width += len(lit) + 2
	}
	oneLine = oneLine && width <= 100
	for i, e := range vals {
		switch {
		case !oneLine:
			setBlank(before[i], "\n"+indent+unit)
		case i == 0:
			setBlank(before[i], "")
		default:
			setBlank(before[i], " ")
		}
		if isObj {
			v.Value.(*hujson.Object).Members[i].Name.AfterExtra = nil
			setBlank(&e.BeforeExtra, " ")
		}
		if i == len(vals)-1 && isBlank(e.AfterExtra) {
			e.AfterExtra = nil // no trailing comma in what we write
		}
		layoutNew(e, indent+unit, unit)
	}
	if oneLine {
		setBlank(after, "")
	} else {
		setBlank(after, "\n"+indent)
	}
}
