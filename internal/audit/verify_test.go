package audit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// lines returns the lines of the current file, without their newlines.
func lines(t *testing.T, dir string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, CurrentFile))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

func writeLines(t *testing.T, dir string, ls [][]byte) {
	t.Helper()
	b := append(bytes.Join(ls, []byte("\n")), '\n')
	if err := os.WriteFile(filepath.Join(dir, CurrentFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Each change by hand is found, at the line it was made.
func TestVerifyFindsTampering(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func([][]byte) [][]byte
		want   []Problem // File and Line; Msg is checked to hold Msg
	}{{
		name:   "deleted",
		change: func(ls [][]byte) [][]byte { return append(ls[:2:2], ls[3:]...) },
		want:   []Problem{{File: CurrentFile, Line: 3, Msg: "seq 3 missing before this line"}},
	}, {
		name: "edited",
		change: func(ls [][]byte) [][]byte {
			ls[2] = bytes.Replace(ls[2], []byte(`"decision":"allowed"`), []byte(`"decision":"denied"`), 1)
			return ls
		},
		want: []Problem{{File: CurrentFile, Line: 3, Msg: "seq 3 does not hash to what the line after it (line 4) records"}},
	}, {
		name: "edited so that it is not JSON",
		change: func(ls [][]byte) [][]byte {
			ls[2] = ls[2][:len(ls[2])-3]
			return ls
		},
		want: []Problem{{File: CurrentFile, Line: 3, Msg: "not an entry"}},
	}, {
		name: "seq edited",
		change: func(ls [][]byte) [][]byte {
			ls[2] = bytes.Replace(ls[2], []byte(`"seq":3`), []byte(`"seq":9`), 1)
			return ls
		},
		want: []Problem{{File: CurrentFile, Line: 3, Msg: "seq 9 where 3 was due"}},
	}, {
		name: "reordered",
		change: func(ls [][]byte) [][]byte {
			ls[2], ls[3] = ls[3], ls[2]
			return ls
		},
		want: []Problem{
			{File: CurrentFile, Line: 3, Msg: "seq 3 missing before this line"},
			{File: CurrentFile, Line: 4, Msg: "seq 3 after seq 4: out of order"},
		},
	}, {
		name:   "copied",
		change: func(ls [][]byte) [][]byte { return append(ls, ls[1]) },
		want:   []Problem{{File: CurrentFile, Line: 7, Msg: "seq 2 after seq 6: out of order, or a copy"}},
	}, {
		name:   "last line cut",
		change: func(ls [][]byte) [][]byte { return ls[:5] },
		want:   []Problem{{File: CurrentFile, Msg: "seq 6 missing at the end of the trail"}},
	}, {
		name: "last line edited",
		change: func(ls [][]byte) [][]byte {
			ls[5] = bytes.Replace(ls[5], []byte(`"outcome":"ok"`), []byte(`"outcome":"error"`), 1)
			return ls
		},
		want: []Problem{{File: CurrentFile, Line: 6, Msg: "seq 6, the last line, was changed"}},
	}, {
		name:   "first line cut",
		change: func(ls [][]byte) [][]byte { return ls[1:] },
		want:   []Problem{{File: CurrentFile, Line: 1, Msg: "seq 1 missing at the start of the trail"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l := open(t, dir, nil)
			record(t, l, 6, "s")
			if r := verify(t, dir); !r.OK() {
				t.Fatalf("before the change: %+v", r.Problems)
			}
			writeLines(t, dir, tc.change(lines(t, dir)))
			r := verify(t, dir)
			if diff := cmp.Diff(tc.want, r.Problems, cmpopts.IgnoreFields(Problem{}, "Msg")); diff != "" {
				t.Fatalf("problems (-want +got):\n%s\nall: %+v", diff, r.Problems)
			}
			for i, p := range r.Problems {
				if !strings.Contains(p.Msg, tc.want[i].Msg) {
					t.Errorf("problem %d: %q, want it to hold %q", i, p.Msg, tc.want[i].Msg)
				}
			}
			if len(r.Torn) != 0 {
				t.Errorf("torn: %+v", r.Torn)
			}
		})
	}
}

func TestVerifyHeadRemoved(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, nil)
	record(t, l, 2, "s")
	l.Close()
	if err := os.Remove(filepath.Join(dir, HeadFile)); err != nil {
		t.Fatal(err)
	}
	r := verify(t, dir)
	if len(r.Problems) != 1 || r.Problems[0].File != HeadFile {
		t.Errorf("problems: %+v", r.Problems)
	}
}

// A crash in the middle of a write leaves a file that verifies up to the
// torn line; the next line starts on its own and chains on the line
// before the torn one, whichever Log writes it.
func TestTornLine(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, nil)
	record(t, l, 3, "s")
	ls := lines(t, dir)
	f, err := os.OpenFile(filepath.Join(dir, CurrentFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	torn := ls[2][:len(ls[2])/2] // half a line, as a crash leaves it
	if _, err := f.Write(torn); err != nil {
		t.Fatal(err)
	}
	f.Close()
	offset := int64(len(bytes.Join(ls, []byte("\n"))) + 1)
	wantTorn := []Position{{File: CurrentFile, Line: 4, Offset: offset}}

	r := verify(t, dir)
	if !r.OK() || r.Lines != 3 {
		t.Fatalf("report: %+v", r)
	}
	if diff := cmp.Diff(wantTorn, r.Torn); diff != "" {
		t.Errorf("torn (-want +got):\n%s", diff)
	}

	record(t, l, 1, "s") // the Log that wrote before
	other := open(t, dir, nil)
	record(t, other, 1, "s") // and another
	r = verify(t, dir)
	if !r.OK() || r.Lines != 5 || r.Last != 5 {
		t.Fatalf("report: %+v", r)
	}
	if diff := cmp.Diff(wantTorn, r.Torn); diff != "" {
		t.Errorf("torn (-want +got):\n%s", diff)
	}
	es := readAll(t, dir, Filter{})
	if len(es) != 5 || es[3].Seq != 4 || es[4].Seq != 5 {
		t.Errorf("entries: %+v", es)
	}
}

// A crash after a line's last byte but before its newline (and before
// the head) leaves a whole line torn: the next line takes its seq.
func TestTornWholeLine(t *testing.T) {
	clock := fixedClock()
	full := t.TempDir()
	record(t, open(t, full, &Options{Now: clock}), 3, "s")
	third := lines(t, full)[2]

	dir := t.TempDir()
	l := open(t, dir, &Options{Now: fixedClock()}) // the same times
	record(t, l, 2, "s")
	f, err := os.OpenFile(filepath.Join(dir, CurrentFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(third); err != nil {
		t.Fatal(err)
	}
	f.Close()
	record(t, l, 1, "s")
	r := verify(t, dir)
	if !r.OK() || r.Lines != 3 || len(r.Torn) != 1 || r.Torn[0].Line != 3 {
		t.Fatalf("report: %+v", r)
	}
}

// Lines cut from the end, then a new line: the new line chains on the
// head, so that the cut is found where it was made.
func TestCutThenRecord(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, nil)
	record(t, l, 5, "s")
	writeLines(t, dir, lines(t, dir)[:3])
	record(t, l, 1, "s")
	r := verify(t, dir)
	if len(r.Problems) != 1 || r.Problems[0].Line != 4 || !strings.Contains(r.Problems[0].Msg, "seq 4–5 (2 lines) missing") {
		t.Errorf("problems: %+v", r.Problems)
	}
}

// A crash between a write of several lines (RecordAll) and the head's
// update leaves the head at the line before them, or, in the trail's
// first write, empty: the trail verifies, and the next line chains on. A
// head further behind, or emptied after the first write, is a problem.
func TestCrashBeforeHead(t *testing.T) {
	batch := func(t *testing.T, l *Log, n int) {
		t.Helper()
		var es []Event
		for i := range n {
			es = append(es, Event{Kind: KindCall, Frontend: "vscode#1", Tool: fmt.Sprintf("b__t%d", i), Server: "b", Outcome: OutcomeOK})
		}
		if err := l.RecordAll(context.Background(), es); err != nil {
			t.Fatal(err)
		}
	}
	readHead := func(t *testing.T, dir string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, HeadFile))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	writeHead := func(t *testing.T, dir string, b []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, HeadFile), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("head behind a batch", func(t *testing.T) {
		dir := t.TempDir()
		l := open(t, dir, &Options{Now: fixedClock()})
		record(t, l, 2, "s")
		head := readHead(t, dir)
		batch(t, l, 3)
		writeHead(t, dir, head)
		if r := verify(t, dir); !r.OK() || r.Lines != 5 || len(r.Torn) != 0 {
			t.Fatalf("report: %+v", r)
		}
		// The write cut in its last line, too.
		b, err := os.ReadFile(filepath.Join(dir, CurrentFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, CurrentFile), b[:len(b)-20], 0o600); err != nil {
			t.Fatal(err)
		}
		if r := verify(t, dir); !r.OK() || r.Lines != 4 || len(r.Torn) != 1 || r.Torn[0].Line != 5 {
			t.Fatalf("report: %+v", r)
		}
		record(t, open(t, dir, &Options{Now: fixedClock()}), 1, "after")
		if r := verify(t, dir); !r.OK() || r.Lines != 5 || r.Last != 5 || len(r.Torn) != 1 {
			t.Fatalf("after a line more: %+v", r)
		}
	})
	t.Run("first write", func(t *testing.T) {
		dir := t.TempDir()
		batch(t, open(t, dir, &Options{Now: fixedClock()}), 3)
		writeHead(t, dir, nil)
		if r := verify(t, dir); !r.OK() || r.Lines != 3 {
			t.Fatalf("report: %+v", r)
		}
	})
	t.Run("head emptied", func(t *testing.T) {
		dir := t.TempDir()
		l := open(t, dir, &Options{Now: fixedClock()})
		record(t, l, 1, "s")
		batch(t, l, 3)
		writeHead(t, dir, nil)
		if r := verify(t, dir); len(r.Problems) != 1 || r.Problems[0].File != HeadFile {
			t.Fatalf("problems: %+v", r.Problems)
		}
	})
	t.Run("head further behind", func(t *testing.T) {
		dir := t.TempDir()
		l := open(t, dir, &Options{Now: fixedClock()})
		record(t, l, 1, "s")
		head := readHead(t, dir)
		record(t, l, 1, "s")
		batch(t, l, 3)
		writeHead(t, dir, head)
		if r := verify(t, dir); len(r.Problems) != 1 || r.Problems[0].File != HeadFile || !strings.Contains(r.Problems[0].Msg, "replaced") {
			t.Fatalf("problems: %+v", r.Problems)
		}
	})
}
