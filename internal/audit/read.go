package audit

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/freecode/freecode/internal/filelock"
)

// rotatedFile is a rotated file's name and what the name says.
type rotatedFile struct {
	name    string
	rotated time.Time // when it was rotated: no line in it is later
	last    int64     // the seq of its last line
}

// rotatedFiles lists dir's rotated files, oldest first (by the seq their
// names give, which a clock set back does not disorder).
func rotatedFiles(dir string) ([]rotatedFile, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []rotatedFile
	for _, de := range des {
		if rf, ok := parseRotated(de.Name()); ok && de.Type().IsRegular() {
			files = append(files, rf)
		}
	}
	slices.SortFunc(files, func(a, b rotatedFile) int {
		if c := cmp.Compare(a.last, b.last); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return files, nil
}

func parseRotated(name string) (rotatedFile, bool) {
	rest, ok := strings.CutPrefix(name, "audit-")
	if !ok {
		return rotatedFile{}, false
	}
	if rest, ok = strings.CutSuffix(rest, ".jsonl"); !ok {
		return rotatedFile{}, false
	}
	ts, seq, ok := strings.Cut(rest, "-")
	if !ok {
		return rotatedFile{}, false
	}
	t, err := time.Parse(rotatedTime, ts)
	if err != nil {
		return rotatedFile{}, false
	}
	last, err := strconv.ParseInt(seq, 10, 64)
	if err != nil || last < 0 {
		return rotatedFile{}, false
	}
	return rotatedFile{name: name, rotated: t, last: last}, true
}

// snapshot is a trail's files opened at one instant: rotated files, then
// the current one (size bytes of it), and the head as it was then.
type snapshot struct {
	files []snapFile
	head  []byte // nil if there is none
}

type snapFile struct {
	rotatedFile // name alone for the current file
	f           *os.File
	size        int64 // -1: read to the end
}

// take opens dir's files under the directory's lock, so that no rotation
// or half-written line falls in between; readers hold it only that long.
// Where the lock cannot be taken for want of permission (a managed
// directory on a system whose lock is a file beside it), it reads without
// it, and a line being written may show as torn.
func take(ctx context.Context, dir string) (*snapshot, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	lock, err := filelock.Acquire(ctx, filepath.Join(dir, CurrentFile))
	if err != nil && !errors.Is(err, fs.ErrPermission) {
		return nil, err
	}
	if lock != nil {
		defer lock.Unlock()
	}
	files, err := rotatedFiles(dir)
	if err != nil {
		return nil, err
	}
	s := &snapshot{}
	for _, rf := range files {
		f, err := os.Open(filepath.Join(dir, rf.name))
		if err != nil {
			s.close()
			return nil, err
		}
		s.files = append(s.files, snapFile{rotatedFile: rf, f: f, size: -1})
	}
	if f, err := os.Open(filepath.Join(dir, CurrentFile)); err == nil {
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			s.close()
			return nil, err
		}
		s.files = append(s.files, snapFile{rotatedFile: rotatedFile{name: CurrentFile}, f: f, size: fi.Size()})
	} else if !errors.Is(err, fs.ErrNotExist) {
		s.close()
		return nil, err
	}
	if b, err := os.ReadFile(filepath.Join(dir, HeadFile)); err == nil {
		s.head = b
	} else if !errors.Is(err, fs.ErrNotExist) {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *snapshot) close() {
	for _, sf := range s.files {
		sf.f.Close()
	}
}

// reader returns sf's bytes as the snapshot saw them.
func (sf *snapFile) reader() io.Reader {
	if sf.size < 0 {
		return sf.f
	}
	return io.NewSectionReader(sf.f, 0, sf.size)
}

// eachLine calls fn with each line of r (without its newline), its
// 1-based number, its offset, and whether a newline ended it.
func eachLine(r io.Reader, fn func(line []byte, n int, off int64, terminated bool) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var off int64
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: gather it.
			long := bytes.Clone(line)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 0 {
			terminated := line[len(line)-1] == '\n'
			if terminated {
				line = line[:len(line)-1]
			}
			if ferr := fn(line, n, off, terminated); ferr != nil {
				return ferr
			}
			off += int64(len(line))
			if terminated {
				off++
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// Filter selects the entries Read and Follow pass on; its zero value
// selects all.
type Filter struct {
	// Since drops entries written before it.
	Since time.Time
	// Server keeps only the entries about this server.
	Server string
}

func (f Filter) match(e *Entry) bool {
	return !e.Time.Before(f.Since) && (f.Server == "" || e.Server == f.Server)
}

// Read calls fn with each entry of the trail in dir that f selects, oldest
// first, until fn returns an error, which Read returns. Lines that are not
// entries are skipped; Verify tells whether the trail is whole. A
// directory that does not exist is an error that wraps fs.ErrNotExist.
func Read(ctx context.Context, dir string, f Filter, fn func(Entry) error) error {
	_, err := readFrom(ctx, dir, f, 0, fn)
	return err
}

// readFrom is Read of the entries above seq after. It returns where the
// current file was read to, the file left open, for Follow; nil if there
// was no current file.
func readFrom(ctx context.Context, dir string, f Filter, after int64, fn func(Entry) error) (*tail, error) {
	s, err := take(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("reading the audit trail: %w", err)
	}
	var t *tail
	defer func() {
		for _, sf := range s.files {
			if t == nil || sf.f != t.f {
				sf.f.Close()
			}
		}
	}()
	for i := range s.files {
		sf := &s.files[i]
		if sf.size < 0 && (sf.rotated.Before(f.Since) || sf.last <= after) {
			continue // nothing in it is selected
		}
		var end int64 // the end of the last complete line
		err := eachLine(sf.reader(), func(line []byte, _ int, off int64, terminated bool) error {
			if !terminated {
				return nil
			}
			end = off + int64(len(line)) + 1
			e, ok := parseLine(line)
			if !ok || e.Seq <= after || !f.match(&e) {
				return nil
			}
			after = e.Seq
			e.Raw = bytes.Clone(line)
			return fn(e)
		})
		if err != nil {
			return nil, err
		}
		if sf.size >= 0 {
			fi, err := sf.f.Stat()
			if err != nil {
				return nil, err
			}
			// A line not ended yet is read again at the next poll.
			t = &tail{f: sf.f, fi: fi, off: end, last: after}
		}
	}
	return t, nil
}

// tail is where Follow has read the current file to.
type tail struct {
	f    *os.File
	fi   os.FileInfo
	off  int64
	last int64 // the last seq passed on, or skipped by the filter
}

// FollowEvery is how often Follow looks for new lines. It polls rather
// than watch the directory: a managed directory may be on a file system
// that tells nothing, and a trail grows at the pace of tool calls.
var FollowEvery = 250 * time.Millisecond

// Follow is Read, then goes on calling fn with each entry appended to the
// trail, across rotations, until ctx is done (then it returns ctx.Err())
// or fn returns an error.
func Follow(ctx context.Context, dir string, f Filter, fn func(Entry) error) error {
	var last int64
	note := func(e Entry) error {
		last = e.Seq
		return fn(e)
	}
	t, err := readFrom(ctx, dir, f, 0, note)
	if err != nil {
		return err
	}
	defer func() {
		if t != nil {
			t.f.Close()
		}
	}()
	tick := time.NewTicker(FollowEvery)
	defer tick.Stop()
	path := filepath.Join(dir, CurrentFile)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		fi, err := os.Stat(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("following the audit trail: %w", err)
		}
		if t != nil && err == nil && os.SameFile(fi, t.fi) {
			if fi.Size() > t.off {
				if err := t.readNew(f, note); err != nil {
					return err
				}
			}
			continue
		}
		if err != nil {
			continue // between a rotation's rename and the next line
		}
		// The file was rotated (perhaps more than once): read what was
		// added since, whichever files it is in now.
		if t != nil {
			last = max(last, t.last)
			t.f.Close()
		}
		if t, err = readFrom(ctx, dir, f, last, note); err != nil {
			return err
		}
		if t != nil {
			last = max(last, t.last)
		}
	}
}

// readNew passes on the complete lines appended to the current file.
func (t *tail) readNew(f Filter, fn func(Entry) error) error {
	r := io.NewSectionReader(t.f, t.off, 1<<62)
	return eachLine(r, func(line []byte, _ int, _ int64, terminated bool) error {
		if !terminated {
			return nil // written in part: read again next time
		}
		t.off += int64(len(line)) + 1
		e, ok := parseLine(line)
		if !ok || e.Seq <= t.last {
			return nil
		}
		t.last = e.Seq
		if !f.match(&e) {
			return nil
		}
		e.Raw = bytes.Clone(line)
		return fn(e)
	})
}
