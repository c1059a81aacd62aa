package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

// Position is where a line is: the file (its name in the trail's
// directory), the line's number in it from 1, and its byte offset.
type Position struct {
	File   string
	Line   int
	Offset int64
}

// Problem is something Verify found that the log does not do: a line
// deleted, changed, inserted or moved, a file removed, the head replaced.
type Problem struct {
	File string
	Line int // 0: the file as a whole
	Msg  string
}

// Report is what Verify found.
type Report struct {
	// Lines is the number of entries in the chain.
	Lines int
	// Files are the files read, oldest first.
	Files []string
	// First and Last are the seq of the first and the last entry. First
	// is above 1 once Options.Keep has removed the oldest files.
	First, Last int64
	// Torn are the lines a crash cut short (or, Verify cannot tell,
	// lines that are not entries and that the chain skips): warnings.
	Torn []Position
	// Problems are what shows the trail was tampered with.
	Problems []Problem
}

// OK reports that Verify found no problem.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// Verify reads the trail in dir, every file in order, and checks that each
// entry's seq and prev follow from the line before, that the first line is
// the first the trail should hold, and that the last is the one
// audit.head records.
//
// It finds a line deleted, edited, inserted or moved, a rotated file
// removed, and (through audit.head) lines cut from the end of the trail
// and the oldest files removed by hand. It cannot find what is rewritten
// consistently: the head and every line after the change recomputed,
// which anyone who may write the directory can do. A line that is not an
// entry and that the chain steps over is reported as torn, as a crash
// leaves it: Verify cannot tell that from junk added by hand, but it
// names it.
//
// An error is a trail that could not be read (a directory that does not
// exist wraps fs.ErrNotExist), not a problem in it.
func Verify(ctx context.Context, dir string) (Report, error) {
	s, err := take(ctx, dir)
	if err != nil {
		return Report{}, fmt.Errorf("verifying the audit trail: %w", err)
	}
	defer s.close()
	v := verifier{floor: 1}
	var h headRecord
	headFound, hasHead := s.head != nil, false
	if headFound {
		if h, hasHead = parseHead(s.head); hasHead {
			v.floor = h.first
		} else if len(s.head) > 0 {
			v.problem(Position{File: HeadFile}, "not a head the log wrote: it was changed")
		}
	}
	for _, sf := range s.files {
		v.r.Files = append(v.r.Files, sf.name)
		v.fileStart = true
		err := eachLine(sf.reader(), func(line []byte, n int, off int64, terminated bool) error {
			pos := Position{File: sf.name, Line: n, Offset: off}
			e, ok := parseLine(line)
			if !ok {
				v.pending = append(v.pending, pendingLine{pos, terminated})
				v.lastWasLine = false
				return nil
			}
			sum := sha256.Sum256(line)
			v.entry(&e, hex.EncodeToString(sum[:]), pos)
			v.fileStart = false
			return nil
		})
		if err != nil {
			return Report{}, fmt.Errorf("verifying the audit trail: reading %s: %w", sf.name, err)
		}
	}
	v.finish(h, hasHead, headFound, len(s.head) == 0)
	return v.r, nil
}

// link is an entry of the chain as Verify keeps it.
type link struct {
	seq        int64
	hash, prev string
	time       time.Time
	pos        Position
}

type pendingLine struct {
	pos        Position
	terminated bool
}

type verifier struct {
	r     Report
	floor int64 // the first seq the trail should hold
	// last is the last entry in the chain, before the one before it.
	last, before *link
	// runBefore is the entry before the last run of entries of one time:
	// the lines of one write (RecordAll) share it. nil when the run
	// starts the chain.
	runBefore *link
	// lastWasLine: the line just read is last.
	lastWasLine bool
	// pending are the lines since last that are not entries.
	pending   []pendingLine
	fileStart bool // no entry of the current file read yet
}

func (v *verifier) problem(pos Position, format string, args ...any) {
	if n := len(v.r.Problems); n > 0 && pos.Line > 0 {
		if p := v.r.Problems[n-1]; p.File == pos.File && p.Line == pos.Line {
			return // one problem a line: the first explains the rest
		}
	}
	v.r.Problems = append(v.r.Problems, Problem{File: pos.File, Line: pos.Line, Msg: fmt.Sprintf(format, args...)})
}

// chains reports that e is the line due after last (or at the start).
func (v *verifier) chains(e *Entry) bool {
	if v.last == nil {
		return e.Seq <= v.floor && (e.Seq > 1 || e.Prev == "")
	}
	return e.Seq == v.last.seq+1 && e.Prev == v.last.hash
}

// entry takes the next entry of the trail.
func (v *verifier) entry(e *Entry, hash string, pos Position) {
	l := &link{seq: e.Seq, hash: hash, prev: e.Prev, time: e.Time, pos: pos}
	reported := false
	if len(v.pending) > 0 {
		// Lines that are not entries are torn if the chain steps over
		// them; otherwise they took the place of what is missing.
		torn := v.chains(e)
		for _, p := range v.pending {
			if torn {
				v.r.Torn = append(v.r.Torn, p.pos)
			} else {
				v.problem(p.pos, "not an entry of the trail: a line was changed or replaced")
				reported = true
			}
		}
		v.pending = nil
	}
	switch last := v.last; {
	case reported:
		// The lines just reported account for what follows.
	case last == nil:
		v.r.First = e.Seq
		switch {
		case e.Seq == 1 && e.Prev != "":
			v.problem(pos, "the first line names a line before it: the lines before it were removed")
		case e.Seq > v.floor:
			v.problem(pos, "%s missing at the start of the trail: the oldest lines or files were removed (not by rotation)", seqRange(v.floor, e.Seq-1))
		}
	case e.Seq == last.seq+1 && e.Prev == last.hash:
	case e.Seq == last.seq+1:
		v.problem(last.pos, "seq %d does not hash to what the line after it (%s) records: one of them was changed", last.seq, at(last.pos, pos))
	case e.Seq == last.seq && e.Prev == last.prev && v.lastWasLine:
		// The line before is this one cut short of its newline by a
		// crash, and this one was written again after it.
		v.r.Torn = append(v.r.Torn, last.pos)
		v.r.Lines--
		v.last = v.before
	case e.Seq <= last.seq:
		v.problem(pos, "seq %d after seq %d: out of order, or a copy", e.Seq, last.seq)
		v.lastWasLine = false
		return
	case e.Prev == last.hash:
		v.problem(pos, "seq %d where %d was due: its seq was changed", e.Seq, last.seq+1)
		l.seq = last.seq + 1
	case v.fileStart:
		v.problem(pos, "%s missing before this file: a file was removed, or lines cut from the end of the one before", seqRange(last.seq+1, e.Seq-1))
	default:
		v.problem(pos, "%s missing before this line: deleted or moved", seqRange(last.seq+1, e.Seq-1))
	}
	if v.last == nil || !v.last.time.Equal(l.time) {
		v.runBefore = v.last
	}
	v.r.Lines++
	v.before, v.last = v.last, l
	v.r.Last = l.seq
	v.lastWasLine = true
}

// finish judges the lines left pending and checks the end of the trail
// against the head.
//
// A writer writes its lines, then the head: a crash between the two
// leaves the head at the line before the write (in the trail's first
// write, an empty head), which is no problem. The lines of one write
// are those of one time.
func (v *verifier) finish(h headRecord, hasHead, headFound, emptyHead bool) {
	for _, p := range v.pending {
		if p.terminated {
			v.problem(p.pos, "not an entry of the trail: a line was changed or added")
		} else {
			v.r.Torn = append(v.r.Torn, p.pos)
		}
	}
	last := v.last
	switch {
	case !hasHead:
		switch {
		case last == nil:
		case !headFound:
			v.problem(Position{File: HeadFile}, "missing: lines cut from the end of the trail could not be found")
		case emptyHead && (v.runBefore != nil || v.r.First != 1):
			// Empty after more than the trail's first write.
			v.problem(Position{File: HeadFile}, "empty: it was changed, and lines cut from the end of the trail could not be found")
		}
	case last == nil:
		v.problem(Position{File: HeadFile}, "records seq %d, but the trail holds no line: its files were removed", h.seq)
	case h.seq == last.seq && h.hash != last.hash:
		v.problem(last.pos, "seq %d, the last line, was changed: %s records another hash", last.seq, HeadFile)
	case h.seq == last.seq:
	case h.seq == last.seq-1 && v.before != nil && h.hash == v.before.hash,
		v.runBefore != nil && h.seq == v.runBefore.seq && h.hash == v.runBefore.hash:
		// A writer stopped between its lines and the head.
	case h.seq > last.seq:
		v.problem(Position{File: last.pos.File}, "%s missing at the end of the trail (%s records seq %d): lines or files were cut from the end", seqRange(last.seq+1, h.seq), HeadFile, h.seq)
	default:
		v.problem(Position{File: HeadFile}, "records seq %d, before the trail's last, %d: it was replaced", h.seq, last.seq)
	}
}

func seqRange(from, to int64) string {
	if from == to {
		return fmt.Sprintf("seq %d", from)
	}
	return fmt.Sprintf("seq %d–%d (%d lines)", from, to, to-from+1)
}

// at names pos for a message about a line of from's file.
func at(from, pos Position) string {
	if from.File == pos.File {
		return fmt.Sprintf("line %d", pos.Line)
	}
	return fmt.Sprintf("%s line %d", pos.File, pos.Line)
}
