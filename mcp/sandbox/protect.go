package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/freecode/freecode/mcp/proc"
)

// A protected path that does not exist cannot be bound read-only, and a
// writable directory lets the server create it: so, for the server's
// life, FreeCode puts an empty placeholder there on the host (a directory
// for the names that are directories, else an empty file), binds it
// read-only, and removes it when the last sandbox that holds it is
// released, unless someone outside wrote into it meanwhile. Placeholders
// are counted across the sandboxes of this process: removing one while
// another sandbox has it bound would lift that sandbox's protection (an
// unlinked mount point is detached in every namespace). Each is in this
// process's run record while it exists (proc.RecordHeld), so that the
// next FreeCode process removes it if this one is killed first; and so is
// every protected path a sandbox binds that another FreeCode process may
// have put there, which that next process then leaves alone while this
// one runs. A placeholder this process no longer holds that another live
// FreeCode process's sandbox binds is not removed either: it stays in
// this process's record, for the next FreeCode process to remove once no
// one binds it.
var (
	placeMu sync.Mutex
	places  = map[string]*placeholder{}
)

type placeholder struct {
	refs int
	dir  bool
	info fs.FileInfo // as made, to remove only what is still ours
}

// placeholders says, of the names of Protected, which get a placeholder
// when missing: true a directory, false an empty file. Git's config and
// modules and .gitmodules are made by git itself, and a placeholder would
// break the repository; the shell's files and .gitconfig run only in a
// home, whose top is sealed (Policy.Sealed).
var placeholders = map[string]bool{
	".git/hooks": true, ".freecode": true, ".vscode": true, ".idea": true, ".claude": true, ".cursor": true,
	".mcp.json": false, ".npmrc": false,
}

// holdProtected returns the protected paths of p that can be bound (those
// that exist, and placeholders for those that do not, where their parent
// exists), and a release that removes the placeholders this call made.
func holdProtected(p Policy) ([]string, func(), error) {
	placeMu.Lock()
	defer placeMu.Unlock()
	var bind, held, others []string
	var made []proc.Placeholder
	for _, path := range p.Protected {
		if _, err := os.Lstat(path); err == nil {
			bind = append(bind, path)
			if ph := places[path]; ph != nil {
				ph.refs++ // another sandbox's placeholder: held by this one too
				held = append(held, path)
			} else {
				others = append(others, path)
			}
			continue
		}
		isDir, ok := placeholders[protectedName(path, p)]
		if !ok || slices.Contains(p.Sealed, filepath.Dir(path)) {
			continue // a sealed directory's top takes no new name anyway
		}
		if _, err := os.Stat(filepath.Dir(path)); err != nil {
			continue // .git/hooks without a .git: nothing runs it
		}
		fi, err := makePlaceholder(path, isDir)
		if err != nil {
			unholdLocked(held)
			return nil, func() {}, fmt.Errorf("sandbox: keeping %s from being created: %w", path, err)
		}
		places[path] = &placeholder{refs: 1, dir: isDir, info: fi}
		made = append(made, proc.Placeholder{Path: path, Info: fi})
		held = append(held, path)
		bind = append(bind, path)
	}
	proc.RecordHeld(made, others)
	return bind, func() {
		placeMu.Lock()
		defer placeMu.Unlock()
		proc.ForgetHeld(unholdLocked(held), others)
	}, nil
}

// makePlaceholder makes an empty directory or file at path, which does
// not exist, and returns it as made.
func makePlaceholder(path string, dir bool) (fs.FileInfo, error) {
	if dir {
		if err := os.Mkdir(path, 0o755); err != nil {
			return nil, err
		}
	} else {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
	}
	return os.Lstat(path)
}

// unholdLocked lets go of the placeholders held, removing each that no
// sandbox holds any more, no other FreeCode process's sandbox binds, and
// is still as it was made (a directory only if still empty), and returns
// those to drop from the run record: removed, or someone's own now. The
// caller holds placeMu.
func unholdLocked(held []string) (gone []string) {
	for _, path := range held {
		ph := places[path]
		if ph.refs--; ph.refs > 0 {
			continue
		}
		delete(places, path)
		fi, err := os.Lstat(path)
		if err == nil && os.SameFile(fi, ph.info) && (ph.dir || fi.Size() == 0) {
			if proc.BoundElsewhere(path) {
				continue // kept, and recorded as this process's
			}
			os.Remove(path)
		}
		gone = append(gone, path)
	}
	return gone
}

// protectedName is the name in Protected that path is, under one of p's
// writable directories.
func protectedName(path string, p Policy) string {
	for _, w := range append([]string{p.Cwd}, p.Writable...) {
		if rel, err := filepath.Rel(w, path); err == nil && !strings.HasPrefix(rel, "..") {
			for _, name := range Protected {
				if rel == name {
					return name
				}
			}
		}
	}
	return ""
}

// credentialLine matches an npmrc line that carries a credential: a
// token, a password, a user name, a client certificate's key.
var credentialLine = regexp.MustCompile(`(?i)^\s*[^=]*(_authtoken|_auth|_password|username|email|certfile|keyfile|otp)\s*=`)

// maskedCopies writes, into dir, a copy of each file of p.Masked without
// the lines that hold credentials, and returns the copies' paths, in
// order.
func maskedCopies(p Policy, dir string) ([]string, error) {
	var out []string
	for i, path := range p.Masked {
		data, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("sandbox: %s: %w", path, err)
		}
		var b bytes.Buffer
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if !credentialLine.MatchString(sc.Text()) {
				b.Write(sc.Bytes())
				b.WriteByte('\n')
			}
		}
		cp := filepath.Join(dir, fmt.Sprintf("masked-%d", i))
		if err := os.WriteFile(cp, b.Bytes(), 0o600); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		out = append(out, cp)
	}
	return out, nil
}
