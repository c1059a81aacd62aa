package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

// The test binary doubles as a process that appends to a trail: with
// childEnv set to "<dir>|<n>|<max file bytes>" it records n events there
// and exits.
const childEnv = "AUDIT_TEST_CHILD"

func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		if err := child(v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func child(spec string) error {
	parts := strings.Split(spec, "|")
	if len(parts) != 3 {
		return fmt.Errorf("bad %s %q", childEnv, spec)
	}
	n, _ := strconv.Atoi(parts[1])
	maxBytes, _ := strconv.ParseInt(parts[2], 10, 64)
	l, err := Open(parts[0], &Options{MaxFileBytes: maxBytes})
	if err != nil {
		return err
	}
	defer l.Close()
	for i := range n {
		if err := l.Record(context.Background(), Event{Kind: KindCall, Frontend: "child", Tool: fmt.Sprintf("t%d", i)}); err != nil {
			return err
		}
	}
	return nil
}

// fixedClock is a clock that ticks a millisecond at each reading, from
// a fixed time, so that two trails written alike are alike byte for byte.
func fixedClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

func open(t *testing.T, dir string, opts *Options) *Log {
	t.Helper()
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func record(t *testing.T, l *Log, n int, server string) {
	t.Helper()
	for i := range n {
		e := Event{Kind: KindCall, Frontend: "cli", Tool: fmt.Sprintf("%s__t%d", server, i), Server: server,
			Decision: DecisionAllowed, Rule: "mcp__" + server, Outcome: OutcomeOK, DurationMs: int64(i)}
		if err := l.Record(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
}

func verify(t *testing.T, dir string) Report {
	t.Helper()
	r, err := Verify(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func readAll(t *testing.T, dir string, f Filter) []Entry {
	t.Helper()
	var es []Entry
	if err := Read(context.Background(), dir, f, func(e Entry) error { es = append(es, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return es
}

func TestRecordAndVerify(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l := open(t, dir, nil)
	record(t, l, 5, "github")
	r := verify(t, dir)
	if !r.OK() || r.Lines != 5 || r.First != 1 || r.Last != 5 || len(r.Torn) != 0 {
		t.Fatalf("report: %+v", r)
	}
	es := readAll(t, dir, Filter{})
	for i, e := range es {
		if e.Seq != int64(i+1) || e.Kind != KindCall || e.Time.Location() != time.UTC {
			t.Errorf("entry %d: %+v", i, e)
		}
	}
	if es[0].Prev != "" || es[1].Prev == "" {
		t.Errorf("prev: first %q, second %q", es[0].Prev, es[1].Prev)
	}
	if runtime.GOOS == "windows" {
		return
	}
	for name, want := range map[string]fs.FileMode{"": 0o700, CurrentFile: 0o600, HeadFile: 0o600} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", filepath.Join(dir, name), got, want)
		}
	}
}

func TestRecordNeedsKind(t *testing.T) {
	l := open(t, t.TempDir(), nil)
	if err := l.Record(context.Background(), Event{Tool: "x"}); err == nil {
		t.Error("an event without a kind was recorded")
	}
	l.Close()
	if err := l.Record(context.Background(), Event{Kind: KindCall}); !errors.Is(err, ErrClosed) {
		t.Errorf("Record after Close: %v", err)
	}
}

func TestArgsHash(t *testing.T) {
	a := ArgsHash(json.RawMessage(`{"b": 1, "a": [true, "x"]}`))
	b := ArgsHash(json.RawMessage(`{"a":[true,"x"],"b":1}`))
	if a != b || len(a) != 64 {
		t.Errorf("ArgsHash differs with key order or spacing: %s, %s", a, b)
	}
	if ArgsHash(nil) != ArgsHash(json.RawMessage(`{}`)) {
		t.Error("no arguments do not hash as {}")
	}
	if ArgsHash(json.RawMessage(`{"a":1}`)) == ArgsHash(json.RawMessage(`{"a":2}`)) {
		t.Error("different arguments hash alike")
	}
}

// Args are written compacted onto the one line, whatever their spacing.
func TestArgsOnOneLine(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, nil)
	args := json.RawMessage("{\n  \"path\": \"a\\nb\"\n}")
	if err := l.Record(context.Background(), Event{Kind: KindCall, Args: args, ArgsSHA256: ArgsHash(args), Detail: "two\nlines"}); err != nil {
		t.Fatal(err)
	}
	es := readAll(t, dir, Filter{})
	if len(es) != 1 || string(es[0].Args) != `{"path":"a\nb"}` || es[0].Detail != "two\nlines" {
		t.Fatalf("entries: %+v", es)
	}
	if r := verify(t, dir); !r.OK() || r.Lines != 1 {
		t.Errorf("report: %+v", r)
	}
}

func TestRotation(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, &Options{MaxFileBytes: 1000})
	record(t, l, 30, "s")
	r := verify(t, dir)
	if !r.OK() || r.Lines != 30 || len(r.Files) < 5 || r.Files[len(r.Files)-1] != CurrentFile {
		t.Fatalf("report: %+v", r)
	}
	for _, name := range r.Files {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() > 1000 {
			t.Errorf("%s: %v, %d bytes", name, err, fi.Size())
		}
	}
	es := readAll(t, dir, Filter{})
	for i, e := range es {
		if e.Seq != int64(i+1) {
			t.Fatalf("entry %d has seq %d", i, e.Seq)
		}
	}

	// Removing a rotated file from the middle is found at the next one.
	if err := os.Remove(filepath.Join(dir, r.Files[1])); err != nil {
		t.Fatal(err)
	}
	r = verify(t, dir)
	if len(r.Problems) != 1 || r.Problems[0].File != r.Files[1] || r.Problems[0].Line != 1 ||
		!strings.Contains(r.Problems[0].Msg, "a file was removed") {
		t.Errorf("problems: %+v", r.Problems)
	}
}

func TestKeep(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, &Options{MaxFileBytes: 1000, Keep: 2})
	record(t, l, 30, "s")
	r := verify(t, dir)
	if !r.OK() || len(r.Files) != 3 || r.First <= 1 || r.Last != 30 {
		t.Fatalf("report: %+v", r)
	}
	// The oldest file left, removed by hand, is missing from the start.
	if err := os.Remove(filepath.Join(dir, r.Files[0])); err != nil {
		t.Fatal(err)
	}
	r = verify(t, dir)
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0].Msg, "at the start of the trail") {
		t.Errorf("problems: %+v", r.Problems)
	}
}

// Goroutines with a Log each and two other processes append to one
// directory at once, through rotations: the chain is whole and every seq
// is there once.
func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	const maxBytes, perWriter = 4000, 40
	var cmds []*exec.Cmd
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d|%d", childEnv, dir, perWriter, maxBytes))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	var wg sync.WaitGroup
	for i := range 3 {
		l := open(t, dir, &Options{MaxFileBytes: maxBytes})
		wg.Go(func() {
			for range perWriter {
				if err := l.Record(context.Background(), Event{Kind: KindCall, Frontend: fmt.Sprintf("g%d", i)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	const total = 5 * perWriter
	r := verify(t, dir)
	if !r.OK() || r.Lines != total || len(r.Torn) != 0 {
		t.Fatalf("report: %+v", r)
	}
	es := readAll(t, dir, Filter{})
	if len(es) != total {
		t.Fatalf("%d entries, want %d", len(es), total)
	}
	for i, e := range es {
		if e.Seq != int64(i+1) {
			t.Fatalf("entry %d has seq %d", i, e.Seq)
		}
	}
}

func TestReadFilter(t *testing.T) {
	dir := t.TempDir()
	clock := fixedClock()
	l := open(t, dir, &Options{Now: clock})
	record(t, l, 3, "a")
	mid := clock()
	record(t, l, 2, "b")
	record(t, l, 2, "a")
	got := func(f Filter) (tools []string) {
		for _, e := range readAll(t, dir, f) {
			tools = append(tools, e.Tool)
		}
		return tools
	}
	if diff := cmp.Diff([]string{"a__t0", "a__t1", "a__t2", "a__t0", "a__t1"}, got(Filter{Server: "a"})); diff != "" {
		t.Errorf("server a (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b__t0", "b__t1", "a__t0", "a__t1"}, got(Filter{Since: mid})); diff != "" {
		t.Errorf("since (-want +got):\n%s", diff)
	}
}

func TestReadMissingDir(t *testing.T) {
	err := Read(context.Background(), filepath.Join(t.TempDir(), "none"), Filter{}, func(Entry) error { return nil })
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read of a missing directory: %v", err)
	}
}

func TestFollow(t *testing.T) {
	defer func(d time.Duration) { FollowEvery = d }(FollowEvery)
	FollowEvery = 5 * time.Millisecond
	dir := t.TempDir()
	l := open(t, dir, &Options{MaxFileBytes: 1000})
	record(t, l, 3, "a")

	ctx, cancel := context.WithCancel(context.Background())
	seqs := make(chan int64)
	done := make(chan error)
	go func() {
		done <- Follow(ctx, dir, Filter{Server: "a"}, func(e Entry) error {
			seqs <- e.Seq
			return nil
		})
	}()
	want := int64(1)
	next := func() {
		t.Helper()
		select {
		case s := <-seqs:
			if s != want {
				t.Fatalf("followed seq %d, want %d", s, want)
			}
			want++
		case err := <-done:
			t.Fatalf("Follow returned %v", err)
		case <-time.After(10 * time.Second):
			t.Fatalf("seq %d never came", want)
		}
	}
	for range 3 {
		next()
	}
	// Enough to rotate a few times: every line comes once, in order,
	// and another server's are left out (seq 4 below).
	record(t, l, 1, "b")
	want++
	record(t, l, 20, "a")
	for range 20 {
		next()
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Follow after cancel: %v", err)
	}
}

func BenchmarkRecord(b *testing.B) {
	l, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	args := json.RawMessage(`{"owner":"freecode","repo":"freecode","title":"a bug","body":"it breaks"}`)
	e := Event{Kind: KindCall, Frontend: "vscode", Tool: "github__create_issue", Server: "github",
		ServerIdentity: strings.Repeat("a", 64), DefinitionHash: strings.Repeat("b", 64),
		Decision: DecisionAllowed, Rule: "mcp__github__create_issue", RuleFile: "/home/u/.freecode/settings.json",
		Outcome: OutcomeOK, DurationMs: 120}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		e.ArgsSHA256 = ArgsHash(args)
		if err := l.Record(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
}

// RecordAll writes a batch as Record would one by one: the chain runs
// through it and on after it, across a rotation it causes too.
func TestRecordAll(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l := open(t, dir, &Options{MaxFileBytes: 2000})
	record(t, l, 2, "before")
	var batch []Event
	for i := range 12 {
		batch = append(batch, Event{Kind: KindCall, Frontend: "vscode#1", Tool: fmt.Sprintf("mcp__b__t%d", i), Server: "b", Outcome: OutcomeOK})
	}
	if err := l.RecordAll(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if err := l.RecordAll(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	record(t, l, 1, "after")
	if err := l.RecordAll(context.Background(), []Event{{Kind: KindCall}, {}}); err == nil {
		t.Error("a batch with an event without a kind was recorded")
	}
	r := verify(t, dir)
	if !r.OK() || r.Lines != 15 || r.First != 1 || r.Last != 15 || len(r.Files) < 2 {
		t.Fatalf("report: %+v", r)
	}
	es := readAll(t, dir, Filter{})
	for i, e := range es {
		if e.Seq != int64(i+1) {
			t.Errorf("entry %d has seq %d", i, e.Seq)
		}
	}
	if es[2].Tool != "mcp__b__t0" || es[13].Tool != "mcp__b__t11" || es[14].Server != "after" {
		t.Errorf("order: %+v", es)
	}
}
