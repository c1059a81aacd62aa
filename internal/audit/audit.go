// Package audit keeps FreeCode's audit trail: one JSON line per event (a
// tool call and how it was decided, an approval or review accepted, trust
// given or revoked, a config or rule file changed, a server blocked by
// policy) in a directory (the sidecar keeps it beside the config file,
// ~/.freecode/audit by default, or where the managed settings say).
//
// Each line carries, in "prev", the SHA-256 of the line before it exactly
// as written, and a "seq" one above that line's, across the files a
// rotation makes. A line deleted, edited, inserted or moved breaks the
// chain where it was, and Verify names the place. The last line written is
// also kept in a side file, audit.head (its seq and hash, and the first
// seq the trail still holds), so that lines cut from the end, or the
// oldest files removed, are found too.
//
// The chain has no secret in it: it finds an edit made by hand or by a
// program that knows nothing of it, not one made by whoever rewrites every
// line after the edit and the head (anyone who can write the directory
// can). What makes the trail trustworthy is a directory the user cannot
// write, which a managed setting may choose.
//
// Several processes (the sidecar, one-shot CLI commands, another sidecar)
// append to one directory: each line is written under the cross-process
// lock of internal/filelock, in one write call to a file opened with
// O_APPEND. A crash in the middle of a write leaves a torn line at the end
// of the file; the next line starts on a line of its own and chains on the
// last complete line, and Verify reports the torn line as torn, not as
// tampering.
//
// Lines are not synced to the disk one by one (that would cost a call a
// few milliseconds): a process that crashes loses nothing it wrote, a
// machine that loses power may lose the last lines, and then audit.head
// may name lines the files no longer hold.
package audit

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
	"sync"
	"time"

	"github.com/freecode/freecode/internal/canonjson"
	"github.com/freecode/freecode/internal/filelock"
)

// The values of Event.Kind.
const (
	KindCall     = "call"     // a tool call, whatever its decision
	KindApproval = "approval" // a project server's entry approved
	KindReview   = "review"   // a changed tool definition or rule change accepted
	KindTrust    = "trust"    // trust in a project given or revoked
	KindRules    = "rules"    // a rule file changed
	KindConfig   = "config"   // a config file changed
	KindBlocked  = "blocked"  // a server blocked by the managed policy
)

// The values of Event.Decision.
const (
	DecisionAllowed = "allowed"
	DecisionDenied  = "denied"
	DecisionAsked   = "asked"
)

// The values of Event.Answer: what the user answered a question with.
const (
	AnswerAllowOnce   = "allowOnce"
	AnswerAllowAlways = "allowAlways"
	AnswerDeny        = "deny"
)

// The values of Event.Outcome.
const (
	OutcomeOK        = "ok"
	OutcomeError     = "error"
	OutcomeDenied    = "denied"
	OutcomeCancelled = "cancelled"
	OutcomeTask      = "task" // the call started a task, TaskID
)

// Event is what happened, as the caller of Record knows it. Only Kind is
// required; fields that do not apply to a kind stay empty.
type Event struct {
	Kind string `json:"kind"`
	// Frontend is who asked: "vscode", "web", "cli", or "gateway:" and
	// the name a client of FreeCode as an MCP server gave.
	Frontend string `json:"frontend,omitempty"`
	Tool     string `json:"tool,omitempty"`
	Server   string `json:"server,omitempty"`
	// ServerIdentity is the server entry's approval hash, DefinitionHash
	// the pinned definition's of the tool called.
	ServerIdentity string `json:"serverIdentity,omitempty"`
	DefinitionHash string `json:"definitionHash,omitempty"`
	// Decision is the permission gate's, Rule and RuleFile the rule that
	// made it; Answer is the user's when the gate asked.
	Decision string `json:"decision,omitempty"`
	Rule     string `json:"rule,omitempty"`
	RuleFile string `json:"ruleFile,omitempty"`
	Answer   string `json:"answer,omitempty"`
	// ArgsSHA256 is ArgsHash of the call's arguments. Args are their
	// values, only where a setting asks for them; the caller redacts
	// secrets from them as it does for logs, and Record writes them as
	// given (compacted onto the line).
	ArgsSHA256 string          `json:"argsSha256,omitempty"`
	Args       json.RawMessage `json:"args,omitempty"`
	Outcome    string          `json:"outcome,omitempty"`
	DurationMs int64           `json:"durationMs,omitempty"`
	TaskID     string          `json:"taskId,omitempty"`
	// File is the file a trust, rules or config event is about, By who
	// changed it when FreeCode did ("freecode trust", "vscode").
	File   string `json:"file,omitempty"`
	By     string `json:"by,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Entry is one line of the trail: the Event and what the log adds to it.
type Entry struct {
	// Seq is one above the line before's, 1 for the first line ever.
	Seq int64 `json:"seq"`
	// Time is when the line was written, in UTC.
	Time time.Time `json:"time"`
	// Prev is the hex SHA-256 of the line before, as written without its
	// newline; "" on the first line ever.
	Prev string `json:"prev"`
	Event
	// Raw is the line as read, without its newline (Read and Follow set
	// it; Record ignores it).
	Raw []byte `json:"-"`
}

// ArgsHash returns the hex SHA-256 of the canonical JSON (internal/canonjson)
// of a call's arguments, so that key order and spacing do not change it.
// No arguments hash as the empty object, which MCP takes them for; bytes
// that are not JSON are hashed as they are.
func ArgsHash(args json.RawMessage) string {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	b, err := canonjson.Append(nil, args)
	if err != nil {
		b = args
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// The files of a trail's directory: the current file, the head, and the
// rotated files, audit-<UTC time of the rotation>-<seq of their last
// line>.jsonl.
const (
	CurrentFile = "audit.jsonl"
	HeadFile    = "audit.head"
	rotatedTime = "20060102T150405.000000000Z"
)

// DefaultMaxFileBytes is the size at which the current file is rotated.
const DefaultMaxFileBytes = 10 << 20

// Options are a Log's settings; nil or zero values are the defaults.
type Options struct {
	// MaxFileBytes is the size past which the current file is rotated
	// before the next line; DefaultMaxFileBytes if 0.
	MaxFileBytes int64
	// Keep is how many rotated files are kept: at a rotation the oldest
	// beyond it are removed, and audit.head records the first seq left,
	// so that Verify tells their removal from a removal by hand. 0 (the
	// default) keeps every file: an audit trail does not delete itself
	// unless told to.
	Keep int
	// Now is the clock; time.Now if nil.
	Now func() time.Time
}

// Log appends events to a trail's directory. Its methods may be called
// from several goroutines; other processes may append to the same
// directory at the same time.
type Log struct {
	dir, path, headPath string
	max                 int64
	keep                int
	now                 func() time.Time

	// mu guards the fields below; it is taken inside the directory's
	// lock, which orders every writer of the directory.
	mu sync.Mutex
	// f is the current file as this Log opened it, fi its identity, and
	// size its size after this Log's last write or read of it: while the
	// file at path is f and has that size, no one else wrote since and
	// seq and hash are still the last line's. -1 is unknown.
	f    *os.File
	fi   os.FileInfo
	size int64
	head *os.File
	// seq and hash are the last line's ("" before the first line);
	// first is the first seq the trail holds (1 until Keep removes
	// files).
	seq    int64
	hash   string
	first  int64
	closed bool
}

// ErrClosed is Record's error after Close.
var ErrClosed = errors.New("audit: the log is closed")

// Open opens the trail in dir for appending, creating dir (mode 0700) and
// its files (0600) as needed; an existing directory keeps its mode, which
// a managed one sets. It fails if the current file cannot be opened for
// writing.
func Open(dir string, opts *Options) (*Log, error) {
	l := &Log{
		dir:      dir,
		path:     filepath.Join(dir, CurrentFile),
		headPath: filepath.Join(dir, HeadFile),
		max:      DefaultMaxFileBytes,
		now:      time.Now,
		size:     -1,
	}
	if opts != nil {
		if opts.MaxFileBytes > 0 {
			l.max = opts.MaxFileBytes
		}
		l.keep = max(opts.Keep, 0)
		if opts.Now != nil {
			l.now = opts.Now
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the audit trail's directory: %w", err)
	}
	if err := l.openCurrent(); err != nil {
		return nil, err
	}
	return l, nil
}

// Close closes the log's files. Record fails after it.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return l.closeFiles()
}

func (l *Log) closeFiles() error {
	var err error
	if l.f != nil {
		err = l.f.Close()
		l.f, l.fi = nil, nil
	}
	if l.head != nil {
		if cerr := l.head.Close(); err == nil {
			err = cerr
		}
		l.head = nil
	}
	l.size = -1
	return err
}

// Record appends e to the trail, with the next seq, the time and the hash
// of the line before. It waits for the directory's lock until ctx is
// done.
func (l *Log) Record(ctx context.Context, e Event) error {
	return l.RecordAll(ctx, []Event{e})
}

// RecordAll appends es to the trail in order, as Record would one by one,
// under one lock and in one write: a batch's calls cost one write, not
// one each. The lines are all written or, if the write fails, what it
// left is read back as a torn line.
func (l *Log) RecordAll(ctx context.Context, es []Event) error {
	if len(es) == 0 {
		return nil
	}
	for _, e := range es {
		if e.Kind == "" {
			return errors.New("audit: an event needs a kind")
		}
	}
	lock, err := filelock.Acquire(ctx, l.path)
	if err != nil {
		return fmt.Errorf("recording an audit event: %w", err)
	}
	defer lock.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	torn, err := l.catchUp()
	if err != nil {
		return fmt.Errorf("recording an audit event: %w", err)
	}
	now := l.now().UTC()
	seq, hash := l.seq, l.hash
	var buf []byte
	for _, e := range es {
		ent := Entry{Seq: seq + 1, Time: now, Prev: hash, Event: e}
		line, err := json.Marshal(&ent)
		if err != nil {
			return fmt.Errorf("recording an audit event: %w", err)
		}
		buf = append(append(buf, line...), '\n')
		sum := sha256.Sum256(line)
		seq, hash = ent.Seq, hex.EncodeToString(sum[:])
	}
	if l.size > 0 && l.size+int64(len(buf))+1 > l.max {
		// A rename that fails (on Windows, while another process has
		// the file open) leaves the file to grow until the next one.
		switch err := l.rotate(); {
		case err == nil:
			torn = false
		case l.f == nil:
			return fmt.Errorf("recording an audit event: rotating: %w", err)
		}
	}
	if torn {
		buf = append([]byte{'\n'}, buf...)
	}
	n, err := l.f.Write(buf)
	if err != nil {
		l.size = -1 // what a short write left is read back next time
		return fmt.Errorf("recording an audit event: %w", err)
	}
	l.size += int64(n)
	l.seq, l.hash = seq, hash
	if err := l.writeHead(); err != nil {
		// The lines are written; a head that lags is read past next time.
		return fmt.Errorf("recording an audit event's head: %w", err)
	}
	return nil
}

// catchUp makes l.f the current file and l.seq, l.hash and l.first the
// trail's last line and first seq, reading back what another process
// wrote since this Log last did. torn reports that the file does not end
// in a newline: a write was cut short.
func (l *Log) catchUp() (torn bool, err error) {
	fi, err := os.Stat(l.path)
	if err == nil && l.f != nil && os.SameFile(fi, l.fi) && fi.Size() == l.size {
		return false, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	// Someone else wrote, rotated or removed the file: read it all again.
	if err := l.closeFiles(); err != nil {
		return false, err
	}
	if err := l.openCurrent(); err != nil {
		return false, err
	}
	if l.head, err = os.OpenFile(l.headPath, os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		return false, err
	}
	fi, err = l.f.Stat()
	if err != nil {
		return false, err
	}
	l.size = fi.Size()
	l.seq, l.hash, l.first = 0, "", 1
	last, err := lastEntry(l.f, l.size)
	if err != nil {
		return false, err
	}
	h, hasHead := readHead(l.head)
	if hasHead {
		l.first = h.first
	}
	switch {
	case last.found && (!hasHead || last.seq >= h.seq):
		l.seq, l.hash = last.seq, last.hash
	case hasHead:
		// The head is ahead of the file: its end was cut, or it was
		// just rotated. Chaining on the head makes Verify name the
		// missing lines at the next line, rather than a new line hide
		// them.
		l.seq, l.hash = h.seq, h.hash
	default:
		// No head and nothing in the file: chain on the newest rotated
		// file, if any.
		if err := l.lastRotated(); err != nil {
			return false, err
		}
	}
	return l.size > 0 && !last.endsNL, nil
}

func (l *Log) openCurrent() error {
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("opening the audit trail: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("opening the audit trail: %w", err)
	}
	l.f, l.fi = f, fi
	return nil
}

// lastRotated sets l.seq and l.hash from the newest rotated file.
func (l *Log) lastRotated() error {
	files, err := rotatedFiles(l.dir)
	if err != nil || len(files) == 0 {
		return err
	}
	f, err := os.Open(filepath.Join(l.dir, files[len(files)-1].name))
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	last, err := lastEntry(f, fi.Size())
	if err == nil && last.found {
		l.seq, l.hash = last.seq, last.hash
	}
	return err
}

// rotate renames the current file to a rotated one and opens a new
// current file, then removes the rotated files beyond Keep.
func (l *Log) rotate() error {
	name := fmt.Sprintf("audit-%s-%d.jsonl", l.now().UTC().Format(rotatedTime), l.seq)
	if err := os.Rename(l.path, filepath.Join(l.dir, name)); err != nil {
		return err
	}
	l.f.Close()
	l.f, l.fi, l.size = nil, nil, -1
	if err := l.openCurrent(); err != nil {
		return err
	}
	l.size = 0
	if l.keep == 0 {
		return nil
	}
	files, err := rotatedFiles(l.dir)
	if err != nil {
		return nil
	}
	for _, rf := range files[:max(len(files)-l.keep, 0)] {
		if os.Remove(filepath.Join(l.dir, rf.name)) != nil {
			break
		}
		l.first = rf.last + 1
	}
	return nil
}

// headLen is the length of audit.head: seq, hash and first seq, fixed
// widths, so that each write overwrites the last in one call.
const headLen = 20 + 1 + 64 + 1 + 20 + 1

type headRecord struct {
	seq   int64
	hash  string
	first int64
}

func (l *Log) writeHead() error {
	b := fmt.Appendf(make([]byte, 0, headLen), "%020d %64s %020d\n", l.seq, l.hash, l.first)
	_, err := l.head.WriteAt(b, 0)
	return err
}

// readHead reads audit.head; ok is false if it is missing or is not one.
func readHead(f *os.File) (h headRecord, ok bool) {
	b := make([]byte, headLen)
	n, _ := f.ReadAt(b, 0)
	return parseHead(b[:n])
}

func parseHead(b []byte) (h headRecord, ok bool) {
	if len(b) < headLen || b[headLen-1] != '\n' {
		return h, false
	}
	var hash string
	if n, err := fmt.Sscanf(string(b[:headLen-1]), "%d %s %d", &h.seq, &hash, &h.first); n != 3 || err != nil {
		return h, false
	}
	if _, err := hex.DecodeString(hash); err != nil || len(hash) != 64 || h.seq < 1 || h.first < 1 {
		return h, false
	}
	h.hash = hash
	return h, true
}

// lastLine is what lastEntry finds at the end of a file.
type lastLine struct {
	found  bool // a complete line that is an entry
	seq    int64
	hash   string
	endsNL bool // the file ends in a newline (or is empty)
}

// lastEntry finds the last complete line of f's first size bytes that is
// an entry, reading backwards.
func lastEntry(f *os.File, size int64) (lastLine, error) {
	res := lastLine{endsNL: true}
	if size == 0 {
		return res, nil
	}
	r := backReader{f: f, start: size}
	// Bytes after the last newline are a torn line.
	end, err := r.lastNL(size)
	if err != nil || end < 0 {
		res.endsNL = false
		return res, err
	}
	res.endsNL = end == size-1
	for end >= 0 {
		nl, err := r.lastNL(end)
		if err != nil {
			return res, err
		}
		line := r.buf[nl+1-r.start : end-r.start]
		if e, ok := parseLine(line); ok {
			sum := sha256.Sum256(line)
			res.found, res.seq, res.hash = true, e.Seq, hex.EncodeToString(sum[:])
			return res, nil
		}
		end = nl
	}
	return res, nil
}

// backReader reads a file backwards: buf holds its bytes from start on.
type backReader struct {
	f     *os.File
	start int64
	buf   []byte
}

// lastNL returns the offset of the last newline before off, or -1, reading
// further back (twice as much each time) as needed.
func (r *backReader) lastNL(off int64) (int64, error) {
	const chunk = 8 << 10
	for {
		for i := off - 1; i >= r.start; i-- {
			if r.buf[i-r.start] == '\n' {
				return i, nil
			}
		}
		if r.start == 0 {
			return -1, nil
		}
		n := min(max(int64(len(r.buf)), chunk), r.start)
		more := make([]byte, n+int64(len(r.buf)))
		if _, err := r.f.ReadAt(more[:n], r.start-n); err != nil {
			return -1, err
		}
		copy(more[n:], r.buf)
		off = r.start // what lies above is searched already
		r.buf, r.start = more, r.start-n
	}
}

// parseLine decodes a line of the trail; ok is false if it is not an
// entry (a torn line, or something else).
func parseLine(line []byte) (Entry, bool) {
	var e Entry
	if err := json.Unmarshal(line, &e); err != nil || e.Seq < 1 || e.Kind == "" {
		return Entry{}, false
	}
	e.Raw = line
	return e, true
}
