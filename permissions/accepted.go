package permissions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/atomicfile"
	"github.com/freecode/freecode/internal/filelock"
)

// RuleLists are the valid rules of one rule file by effect, each list
// sorted, each rule once, as compile trims them.
type RuleLists struct {
	Allow []string `json:"allow,omitempty"`
	Ask   []string `json:"ask,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// list returns the list of effect e.
func (l *RuleLists) list(e Effect) *[]string {
	switch e {
	case Allow:
		return &l.Allow
	case Ask:
		return &l.Ask
	}
	return &l.Deny
}

// has reports whether the list of effect e holds p.
func (l *RuleLists) has(e Effect, p string) bool {
	_, ok := slices.BinarySearch(*l.list(e), p)
	return ok
}

// add puts p in the list of effect e, keeping it sorted; a rule already
// there is not added twice. It reports whether it added p.
func (l *RuleLists) add(e Effect, p string) bool {
	s := l.list(e)
	i, ok := slices.BinarySearch(*s, p)
	if ok {
		return false
	}
	*s = slices.Insert(*s, i, p)
	return true
}

// Accepted is what the user accepted of a trusted project's two rule files:
// their rules as they were when the user trusted the project, or last
// accepted a change, plus the allow rules FreeCode itself wrote there for
// the user ("always allow for this project"). In a trusted project a rule
// file can tighten at once but loosens only when the user accepts it: an
// allow rule not in here is ignored, and a deny or ask rule in here that is
// gone from the file is still enforced (see LoadOptions.Accepted).
//
// It is kept in a file of the user's (AcceptedPath), never in the project,
// since what can write the project (a pull, an editor, a sandboxed server
// of the project's) is what it guards against.
type Accepted struct {
	Project RuleLists `json:"project"` // .freecode/settings.json
	Local   RuleLists `json:"local"`   // .freecode/settings.local.json
}

// lists returns the lists of the file of source src (SourceProject or
// SourceLocal).
func (a *Accepted) lists(src Source) *RuleLists {
	if src == SourceProject {
		return &a.Project
	}
	return &a.Local
}

// Hash names the rules a: the hex SHA-256 of their JSON, each list sorted.
// A frontend is shown the rules awaiting review with the hash of the rules
// accepting them records (Pending.Hash), and accepts by it, so that a file
// changed after it was shown is not accepted unseen.
func (a *Accepted) Hash() string {
	data, err := json.Marshal(a)
	if err != nil {
		panic(err) // lists of strings always encode
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Pending is what a trusted project's rule files loosen beyond the rules the
// user accepted, and is held back until the user accepts it.
type Pending struct {
	// Hash is Accepted.Hash of the rules that accepting records: the two
	// files as they were read.
	Hash string
	// Files are the files that loosened, the project's settings.json
	// before settings.local.json.
	Files []FileChange
}

// FileChange is how one rule file loosened since its rules were accepted.
type FileChange struct {
	Path   string
	Source Source   // SourceProject or SourceLocal
	Allow  []string // allow rules added: ignored until accepted
	Ask    []string // ask rules removed: still enforced until accepted
	Deny   []string // deny rules removed: still enforced until accepted
}

// Loosened returns how each file of to loosens the rules from: the allow
// rules to adds, the ask and deny rules it drops, the project's
// settings.json first. paths names the files (by source) in what it
// returns. Files that do not loosen are left out; tightening is not a
// change to accept.
func Loosened(from, to *Accepted, paths map[Source]string) []FileChange {
	var out []FileChange
	for _, src := range []Source{SourceProject, SourceLocal} {
		f, t := from.lists(src), to.lists(src)
		c := FileChange{Path: paths[src], Source: src,
			Allow: missing(t.Allow, f.Allow), Ask: missing(f.Ask, t.Ask), Deny: missing(f.Deny, t.Deny)}
		if len(c.Allow)+len(c.Ask)+len(c.Deny) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// missing returns the rules of a that are not in the sorted list b.
func missing(a, b []string) []string {
	var out []string
	for _, p := range a {
		if _, ok := slices.BinarySearch(b, p); !ok {
			out = append(out, p)
		}
	}
	return out
}

// acceptedDirName is the directory, in ~/.freecode, of the records of the
// rules users accepted.
const acceptedDirName = "trust"

// AcceptedDir returns ~/.freecode/trust, the directory of the rules the
// user accepted of the projects they trust, one 0600 file a project. Like
// config.SecretsDir it does not follow the config file, which --config or
// $FREECODE_CONFIG may put in a repository: what a repository controls must
// not hold what its own files are checked against. Only $HOME moves it.
func AcceptedDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("locating the record of accepted rules: %w", err)
	}
	return filepath.Join(home, ".freecode", acceptedDirName), nil
}

// AcceptedPath returns the file of the rules the user accepted of the
// project in projectDir: AcceptedDir, then the first 32 hex digits of the
// SHA-256 of the project's real path, ".json". A symbolic link to the
// project names the same file.
func AcceptedPath(projectDir string) (string, error) {
	dir, err := AcceptedDir()
	if err != nil {
		return "", err
	}
	real, err := realDir(projectDir)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(real))
	return filepath.Join(dir, hex.EncodeToString(sum[:16])+".json"), nil
}

// realDir is dir absolute with its symbolic links resolved, as config
// records trusted projects.
func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return abs, nil
}

// acceptedRecord is the file AcceptedPath names.
type acceptedRecord struct {
	// Project is the project's real path: the file's name is its hash,
	// and a record of another path is not this project's.
	Project    string    `json:"project"`
	AcceptedAt time.Time `json:"acceptedAt"`
	Rules      Accepted  `json:"rules"`
}

// ReadAccepted returns the rules the user accepted of the project in
// projectDir, nil when there is no record (a project not trusted, or
// trusted before FreeCode kept one). A record that cannot be read or does
// not hold this project's rules is an error.
func ReadAccepted(projectDir string) (*Accepted, error) {
	path, err := AcceptedPath(projectDir)
	if err != nil {
		return nil, err
	}
	return readAccepted(path, projectDir)
}

func readAccepted(path, projectDir string) (*Accepted, error) {
	data, err := config.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the accepted rules: %w", err)
	}
	var rec acceptedRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("reading the accepted rules in %s: %w", path, err)
	}
	if real, _ := realDir(projectDir); rec.Project != real {
		return nil, fmt.Errorf("the accepted rules in %s are of %s, not %s", path, rec.Project, real)
	}
	for _, l := range []*RuleLists{&rec.Rules.Project, &rec.Rules.Local} {
		for _, e := range []Effect{Allow, Ask, Deny} {
			s := l.list(e)
			slices.Sort(*s)
			*s = slices.Compact(*s)
		}
	}
	return &rec.Rules, nil
}

// lockAccepted creates the record's directory (0700) and takes the lock
// every writer of the project's record holds.
func lockAccepted(projectDir string) (path string, unlock func(), err error) {
	if path, err = AcceptedPath(projectDir); err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", nil, fmt.Errorf("recording the accepted rules: %w", err)
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), 20*time.Second,
		errors.New("gave up after 20s; nothing was written, try again"))
	defer cancel()
	lock, err := filelock.Acquire(ctx, path)
	if err != nil {
		return "", nil, fmt.Errorf("recording the accepted rules: %w", err)
	}
	return path, func() { lock.Unlock() }, nil
}

// writeAccepted writes the record; the caller holds its lock.
func writeAccepted(path, projectDir string, a *Accepted) error {
	real, err := realDir(projectDir)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(acceptedRecord{Project: real, AcceptedAt: time.Now().UTC(), Rules: *a}, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("recording the accepted rules: %w", err)
	}
	return nil
}

// RemoveAccepted forgets the rules the user accepted of the project in
// projectDir: trust was revoked, and trusting it again records the rules
// as they are then. No record is no error.
func RemoveAccepted(projectDir string) error {
	path, unlock, err := lockAccepted(projectDir)
	if err != nil {
		return err
	}
	defer unlock()
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("forgetting the accepted rules: %w", err)
	}
	return nil
}

// ReadProject reads the rules of the project's two files (opts.ProjectDir;
// opts.UserFile only to tell whether the project's settings.json is the
// user's, which is then not the project's) as they are now: what accepting
// them records. A file that does not load has the lists it has in keep
// (none when keep is nil), and its error is returned; the others are read
// all the same.
func ReadProject(opts LoadOptions, keep *Accepted) (*Accepted, error) {
	out := &Accepted{}
	var errs []error
	for _, f := range ruleFiles(opts) {
		if f.source == SourceUser {
			continue
		}
		lists, err := readLists(f.path, f.source)
		if err != nil {
			errs = append(errs, err)
			if keep != nil {
				lists = *keep.lists(f.source)
			}
		}
		*out.lists(f.source) = lists
	}
	return out, errors.Join(errs...)
}

// readLists reads the valid rules of one file; a missing file has none.
func readLists(path string, src Source) (RuleLists, error) {
	data, err := config.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return RuleLists{}, nil
	case err != nil:
		return RuleLists{}, fmt.Errorf("reading rules: %w", err)
	}
	_, lists, _, err := parseFile(path, data, src, nil)
	if err != nil {
		return RuleLists{}, err
	}
	return lists, nil
}

// Accept records the rules of the project's two files as they are now as
// the ones the user accepted (the user trusted the project, or accepted
// what changed since), and returns the record it replaced (nil: none) and
// the one it wrote. With hash not "", the rules must hash to it
// (Accepted.Hash: what the user was shown, Pending.Hash): otherwise nothing
// is written and the error is ErrRulesChanged. A file that does not load
// keeps what the record had of it (nothing, without one): its problems are
// the loader's to report.
func Accept(opts LoadOptions, hash string) (before, now *Accepted, err error) {
	path, unlock, err := lockAccepted(opts.ProjectDir)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	before, err = readAccepted(path, opts.ProjectDir)
	if err != nil {
		// An unreadable record is replaced; the user is accepting what
		// the files hold now.
		before = nil
	}
	now, _ = ReadProject(opts, before)
	if hash != "" && now.Hash() != hash {
		return before, now, fmt.Errorf("%w: read them again and accept what they say now", ErrRulesChanged)
	}
	if err := writeAccepted(path, opts.ProjectDir, now); err != nil {
		return before, now, err
	}
	return before, now, nil
}

// ErrRulesChanged is Accept's error when the project's rules no longer
// hash as the ones the user was shown.
var ErrRulesChanged = errors.New("the project's rules changed since they were shown")

// Adopt returns the rules the user accepted of the project, recording its
// rules as they are now when there is no record yet (adopted): a project
// trusted before FreeCode kept records has its rules as they are at the
// first load after, as accepted. When the record cannot be written the
// rules come back all the same, with the error.
func Adopt(opts LoadOptions) (a *Accepted, adopted bool, err error) {
	path, unlock, err := lockAccepted(opts.ProjectDir)
	if err != nil {
		a, _ := ReadProject(opts, nil)
		return a, true, err
	}
	defer unlock()
	if a, err := readAccepted(path, opts.ProjectDir); a != nil || err != nil {
		return a, false, err
	}
	a, _ = ReadProject(opts, nil)
	return a, true, writeAccepted(path, opts.ProjectDir, a)
}

// forgetAllow removes pattern from the allow rules accepted of the file of
// src in the project, when the project has a record: the rule was taken
// back, and the same rule in the file later is another hand's, to review.
func forgetAllow(projectDir string, src Source, pattern string) error {
	if path, err := AcceptedPath(projectDir); err != nil {
		return nil
	} else if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	path, unlock, err := lockAccepted(projectDir)
	if err != nil {
		return err
	}
	defer unlock()
	a, err := readAccepted(path, projectDir)
	if a == nil || err != nil {
		return nil // nothing accepted to forget it from
	}
	l := a.lists(src)
	i, ok := slices.BinarySearch(l.Allow, pattern)
	if !ok {
		return nil
	}
	l.Allow = slices.Delete(l.Allow, i, i+1)
	return writeAccepted(path, projectDir, a)
}

// acceptAllow adds pattern to the allow rules accepted of the file of src
// in the project, when the project has a record (it is trusted): an allow
// rule FreeCode writes for the user is theirs, and must not wait for their
// review. undo takes it back out, for when the rule file could not be
// written; it does nothing if the rule was accepted already.
func acceptAllow(projectDir string, src Source, pattern string) (undo func(), err error) {
	nothing := func() {}
	// Most projects have no record: they are left without a lock taken,
	// and without a directory made for one.
	if path, err := AcceptedPath(projectDir); err != nil {
		return nothing, nil
	} else if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nothing, nil
	}
	path, unlock, err := lockAccepted(projectDir)
	if err != nil {
		return nothing, err
	}
	defer unlock()
	a, err := readAccepted(path, projectDir)
	if a == nil || err != nil {
		// No record: the project is not trusted, and trusting it records
		// the rule with the rest of the file. An unreadable record holds
		// nothing for the rule to join.
		return nothing, nil
	}
	if !a.lists(src).add(Allow, pattern) {
		return nothing, nil
	}
	if err := writeAccepted(path, projectDir, a); err != nil {
		return nothing, err
	}
	return func() {
		path, unlock, err := lockAccepted(projectDir)
		if err != nil {
			return
		}
		defer unlock()
		if a, err := readAccepted(path, projectDir); a != nil && err == nil {
			l := a.lists(src)
			if i, ok := slices.BinarySearch(l.Allow, pattern); ok {
				l.Allow = slices.Delete(l.Allow, i, i+1)
				writeAccepted(path, projectDir, a)
			}
		}
	}, nil
}
