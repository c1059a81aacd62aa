package mcp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// stderrSample reads a real program's stderr, kept in testdata/stderr:
// npx 11 on packages its registry does not have (run here against
// registry.npmjs.org, which answered 404), node and python failing on a
// variable that is not set.
func stderrSample(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "stderr", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// Each kind of failure is told in the user's words, first.
func TestFailureWording(t *testing.T) {
	internal := errors.New(`initialize: calling "initialize": write |1: broken pipe`)
	tests := []struct {
		name     string
		stderr   string // a file of testdata/stderr, or "" for none
		code     int
		how      string
		wantKind FailureKind
		wantMsg  string
	}{
		{"exit 3 on a missing token", "exit-3-token.txt", 3, "exited with code 3", FailureExited,
			"exited with code 3: error: GITHUB_TOKEN is not set"},
		{"node throws", "node-throw.txt", 1, "exited with code 1", FailureExited,
			"exited with code 1: Error: GITHUB_PERSONAL_ACCESS_TOKEN environment variable is not set"},
		{"python KeyError", "python-keyerror.txt", 1, "exited with code 1", FailureExited,
			"exited with code 1: KeyError: 'GITHUB_TOKEN'"},
		{"npx 404, scoped", "npx-404-scoped.txt", 1, "exited with code 1", FailurePackageNotFound,
			"npm has no package named @freecode-nonexistent/definitely-not-a-package-22 (npm's registry answered 404)"},
		{"npx 404", "npx-404.txt", 1, "exited with code 1", FailurePackageNotFound,
			"npm has no package named freecode-not-a-package-zz22 (npm's registry answered 404)"},
		{"no stderr", "", 0, "exited with code 0", FailureExited,
			"exited with code 0 before the MCP handshake, saying nothing on stderr: it does not look like an MCP server, which answers initialize on its stdout and runs until its stdin closes; check the command"},
		{"no stderr, a failure", "", 2, "exited with code 2", FailureExited, "exited with code 2"},
		{"a signal", "", -1, "was ended by signal killed", FailureExited, "was ended by signal killed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr []string
			if tc.stderr != "" {
				stderr = stderrSample(t, tc.stderr)
			}
			f := exitFailure(tc.how, tc.code, stderr, internal)
			if f.Kind != tc.wantKind || f.Msg != tc.wantMsg {
				t.Errorf("got %v %q, want %v %q", f.Kind, f.Msg, tc.wantKind, tc.wantMsg)
			}
			if !errors.Is(f, internal) {
				t.Errorf("the internal error is not kept for the log")
			}
			if strings.Contains(f.Msg, "A complete log") || strings.Contains(f.Msg, "broken pipe") {
				t.Errorf("message leads with internals: %q", f.Msg)
			}
		})
	}

	t.Run("timeout", func(t *testing.T) {
		f := timeoutFailure("no answer within timeout 5s", []string{"Listening on port 3000", "    at x (y:1:2)"}, internal)
		if want := "no answer within timeout 5s; the server's last word on stderr: Listening on port 3000"; f.Kind != FailureTimeout || f.Msg != want {
			t.Errorf("got %v %q, want %q", f.Kind, f.Msg, want)
		}
	})
	t.Run("not on the PATH", func(t *testing.T) {
		dir := t.TempDir()
		_, err := lookCommand("freecode-no-such-command", "", []string{"PATH=" + dir + ":/nonexistent"})
		want := "`freecode-no-such-command` is not on the PATH the server gets (" + dir + ", /nonexistent): install it, or give its full path"
		if f := failureOf(err); f == nil || f.Kind != FailureCommandNotFound || f.Msg != want || !f.final() {
			t.Errorf("got %v, want %q", err, want)
		}
		// The server's PATH counts, not FreeCode's.
		exe := filepath.Join(dir, "freecode-no-such-command")
		if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if p, err := lookCommand("freecode-no-such-command", "", []string{"PATH=" + dir}); err != nil || p != exe {
			t.Errorf("a command on the server's PATH: %q, %v; want %q", p, err, exe)
		}
		if _, err := lookCommand("./nope.js", dir, nil); err == nil || err.Error() != "`./nope.js` does not exist" {
			t.Errorf("a relative path that does not exist: %v", err)
		}
	})
}

// logLines collects a Conn's log lines of FreeCode's own (its life).
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) add(lg Log) {
	if lg.Source == LogFreeCode {
		l.mu.Lock()
		l.lines = append(l.lines, lg.Level+" "+lg.Message)
		l.mu.Unlock()
	}
}

func (l *logLines) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

// A command that is not there fails at once, without a retry: no retry
// can make it appear.
func TestMissingCommandFailsAtOnce(t *testing.T) {
	srv := testSrv(t, "missing")
	srv.Command = []string{"freecode-no-such-command-22", "--stdio"}
	var logs logLines
	c := newTestConnOpts(t, srv, nil, &ConnOptions{Environ: testEnviron, OnLog: logs.add})
	retries := 0
	c.backoff = func(int) time.Duration { retries++; return time.Millisecond }
	err := c.Start(t.Context())
	if err == nil || errors.Is(err, ErrRetrying) {
		t.Fatalf("Start = %v, want a final failure", err)
	}
	st := c.Status()
	want := "`freecode-no-such-command-22` is not on the PATH the server gets (" + pathShown(os.Getenv("PATH"), envValue(testEnviron(), "HOME")) + "): install it, or give its full path"
	if st.State != StateFailed || st.LastError != want || st.LastErrorKind != FailureCommandNotFound || st.Retry != nil || retries != 0 {
		t.Errorf("status %v %q kind %v retry %v, %d retries; want failed %q", st.State, st.LastError, st.LastErrorKind, st.Retry, retries, want)
	}
	if diff := cmp.Diff([]string{"error " + want}, logs.get()); diff != "" {
		t.Errorf("life in the log (-want +got):\n%s", diff)
	}
}

// A server that exits before the handshake says so at once, with its
// exit code and the stderr line that says why, and the status tells the
// next try while it waits.
func TestEarlyExitTellsWhyAndRetries(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join("testdata", "stderr", "exit-3-token.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// Its exit code differs each time: the same exit twice is not retried
	// (TestSameExitTwiceNotRetried).
	srv := testSrv(t, "gh", "stderrfile="+abs, "exit=3", "exitbump="+filepath.Join(t.TempDir(), "runs"))
	var logs logLines
	retrying := make(chan Status, 16)
	opts := &ConnOptions{Environ: testEnviron, OnLog: logs.add, OnStatus: func(st Status) {
		if st.Retry != nil {
			retrying <- st
		}
	}}
	c := newTestConnOpts(t, srv, nil, opts)
	c.backoff = func(int) time.Duration { return time.Hour } // the retry waits: what the status says meanwhile
	err = c.Start(t.Context())
	const want = "exited with code 3: error: GITHUB_TOKEN is not set"
	if !errors.Is(err, ErrRetrying) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Start = %v, want %q and a retry", err, want)
	}
	var st Status
	select {
	case st = <-retrying:
	case <-time.After(hangGuard):
		t.Fatal("no status told the retry")
	}
	if st.State != StateConnecting || st.LastError != want || st.LastErrorKind != FailureExited || !st.HasExitCode || st.ExitCode != 3 {
		t.Errorf("status %v %q kind %v exit %d", st.State, st.LastError, st.LastErrorKind, st.ExitCode)
	}
	if r := st.Retry; r == nil || r.Attempt != 1 || r.Max != reconnectTries || r.At.Before(time.Now().Add(59*time.Minute)) {
		t.Errorf("retry = %+v, want the first of %d, an hour from now", r, reconnectTries)
	}
	if got := c.Status(); got.Retry == nil || got.LastError != want {
		t.Errorf("Status() while it waits: retry %+v, lastError %q", got.Retry, got.LastError)
	}
	wantLines := []string{"info starting: " + strings.Join(srv.Command, " "), "warning " + want, "warning retrying 1/6 in 3600 s"}
	if diff := cmp.Diff(wantLines, logs.get()); diff != "" {
		t.Errorf("life in the log (-want +got):\n%s", diff)
	}
}

// npx's 404 is told as the package npm does not have, and not retried.
func TestPackageNotFoundIsFinal(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join("testdata", "stderr", "npx-404-scoped.txt"))
	if err != nil {
		t.Fatal(err)
	}
	srv := testSrv(t, "pkg", "stderrfile="+abs, "exit=1")
	c := newTestConn(t, srv, nil)
	retries := 0
	c.backoff = func(int) time.Duration { retries++; return time.Millisecond }
	err = c.Start(t.Context())
	const want = "npm has no package named @freecode-nonexistent/definitely-not-a-package-22 (npm's registry answered 404)"
	st := c.Status()
	if err == nil || errors.Is(err, ErrRetrying) || st.State != StateFailed || st.LastError != want || st.LastErrorKind != FailurePackageNotFound || retries != 0 {
		t.Errorf("Start = %v; status %v %q kind %v, %d retries; want failed %q", err, st.State, st.LastError, st.LastErrorKind, retries, want)
	}
}

// The command a local server runs is the one FreeCode found for it: on the
// PATH its entry's env sets, else on the sidecar's, and never one of the
// same name on the PATH FreeCode itself was started with.
func TestServerCommandOnItsPath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in commands are shell scripts")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Two directories, neither on this process's PATH, each with its own
	// freecode-path-test-server, which counts its starts in its own file.
	stand := func(t *testing.T) (dir, starts string) {
		dir = t.TempDir()
		starts = filepath.Join(dir, "starts")
		script := fmt.Sprintf("#!/bin/sh\nexec %q starts=%s \"$@\"\n", exe, starts)
		if err := os.WriteFile(filepath.Join(dir, "freecode-path-test-server"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		return dir, starts
	}
	sidecarDir, sidecarStarts := stand(t)
	ownDir, ownStarts := stand(t)
	sidecarEnv := func() []string {
		return append(slices.DeleteFunc(testEnviron(), func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }), "PATH="+sidecarDir)
	}
	started := func(file string) int {
		b, _ := os.ReadFile(file)
		n, _ := strconv.Atoi(string(b))
		return n
	}
	for _, tc := range []struct {
		name        string
		entryPath   string // the PATH the entry's env sets; "" sets none
		wantSidecar int
		wantOwn     int
	}{
		{name: "the entry sets PATH", entryPath: ownDir, wantOwn: 1},
		{name: "the sidecar's PATH", wantSidecar: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(sidecarStarts)
			os.Remove(ownStarts)
			srv := testSrv(t, "pathed")
			srv.Command = []string{"freecode-path-test-server"}
			if tc.entryPath != "" {
				srv.Env["PATH"] = tc.entryPath + ":/usr/bin:/bin"
			}
			c := newTestConnOpts(t, srv, nil, &ConnOptions{Environ: sidecarEnv, NoRetry: true})
			if err := c.Start(t.Context()); err != nil {
				t.Fatalf("Start: %v", err)
			}
			c.Close()
			if got, want := [2]int{started(sidecarStarts), started(ownStarts)}, [2]int{tc.wantSidecar, tc.wantOwn}; got != want {
				t.Errorf("starts (the sidecar PATH's command, the entry PATH's) = %v, want %v", got, want)
			}
		})
	}
}

// The retry counts mean one thing in the status, the server's log and
// docs/protocol.md: Attempt is the retry that comes next (1 for the first,
// the try after the one that failed), Max the retries in all, and a Conn
// that gives up says how many retries it made: a server that never comes
// up is tried once and retried Max times.
func TestRetryCountsAgree(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join("testdata", "stderr", "exit-3-token.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// Its exit code differs each time: the same exit twice is not retried
	// (TestSameExitTwiceNotRetried).
	srv := testSrv(t, "gh", "stderrfile="+abs, "exit=3", "exitbump="+filepath.Join(t.TempDir(), "runs"))
	var logs logLines
	var (
		mu       sync.Mutex
		attempts []int
		told     int
	)
	failed := make(chan struct{})
	var once sync.Once
	opts := &ConnOptions{Environ: testEnviron, OnLog: logs.add, OnStatus: func(st Status) {
		mu.Lock()
		defer mu.Unlock()
		if r := st.Retry; r != nil && (len(attempts) == 0 || attempts[len(attempts)-1] != r.Attempt) {
			attempts = append(attempts, r.Attempt)
			told = r.Max
		}
		if st.State == StateFailed {
			once.Do(func() { close(failed) })
		}
	}}
	startUntilFailed(t, newTestConnOpts(t, srv, nil, opts), failed)
	lines := logs.get()
	starts := countStarts(lines)
	mu.Lock()
	defer mu.Unlock()
	want := make([]int, reconnectTries)
	for i := range want {
		want[i] = i + 1
	}
	if !slices.Equal(attempts, want) || told != reconnectTries || starts != reconnectTries+1 {
		t.Errorf("retries told %v of %d, %d starts; want %v of %d, %d starts", attempts, told, starts, want, reconnectTries, reconnectTries+1)
	}
	why := func(code int) string { return fmt.Sprintf("exited with code %d: error: GITHUB_TOKEN is not set", code) }
	if last, wantLast := lines[len(lines)-1], fmt.Sprintf("error gave up after %d retries: %s", reconnectTries, why(3+reconnectTries)); last != wantLast {
		t.Errorf("the last life line = %q, want %q", last, wantLast)
	}
	// Each retry is told after the failure it follows.
	retries := 0
	for i, l := range lines {
		if !strings.HasPrefix(l, "warning retrying ") {
			continue
		}
		retries++
		if i == 0 || lines[i-1] != "warning "+why(2+retries) {
			t.Errorf("line %d %q does not follow the failure it retries: %q", i, l, lines[max(0, i-1)])
		}
	}

	// What docs/protocol.md says of them.
	doc, err := os.ReadFile(filepath.Join("..", "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, check := range []struct {
		re   string
		want int
	}{
		{`attempt: number /\* the retry that comes next: (\d+) for the first`, want[0]},
		{`max: number /\* retries in all: (\d+)`, reconnectTries},
		{"`gave up after (\\d+) retries: exited with code 3: …`", reconnectTries},
		{"`retrying (\\d+)/\\d+ in 0.5 s` after the first try", want[0]},
	} {
		m := regexp.MustCompile(check.re).FindSubmatch(doc)
		if m == nil {
			t.Errorf("docs/protocol.md has nothing matching %s", check.re)
			continue
		}
		if n, _ := strconv.Atoi(string(m[1])); n != check.want {
			t.Errorf("docs/protocol.md: %q says %d, the Conn %d", m[0], n, check.want)
		}
	}
}

// A server that exits before the handshake the same way twice in a row
// (the same code, the same telling stderr line) is not retried five more
// times: its cause is on its row from the first second, and it fails at
// the second exit, saying why; a Start tries it again.
func TestSameExitTwiceNotRetried(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join("testdata", "stderr", "exit-3-token.txt"))
	if err != nil {
		t.Fatal(err)
	}
	srv := testSrv(t, "gh", "stderrfile="+abs, "exit=3")
	failed := make(chan struct{})
	var once sync.Once
	var logs logLines
	c := newTestConnOpts(t, srv, nil, &ConnOptions{Environ: testEnviron, OnLog: logs.add, OnStatus: func(st Status) {
		if st.State == StateFailed {
			once.Do(func() { close(failed) })
		}
	}})
	startUntilFailed(t, c, failed)
	st := c.Status()
	if st.LastErrorKind != FailureExited || !st.HasExitCode || st.ExitCode != 3 ||
		!strings.Contains(st.LastError, "exited with code 3: error: GITHUB_TOKEN is not set (it exited the same way twice in a row, so it is not retried") {
		t.Errorf("status: %v %v %d %q", st.LastErrorKind, st.HasExitCode, st.ExitCode, st.LastError)
	}
	if starts := countStarts(logs.get()); starts != 2 {
		t.Errorf("the server started %d times, want 2", starts)
	}
}

// startUntilFailed starts c, whose first try fails, with retries at once,
// and waits until the Conn gives up (failed is closed).
func startUntilFailed(t *testing.T, c *Conn, failed <-chan struct{}) {
	t.Helper()
	c.backoff = func(int) time.Duration { return time.Millisecond }
	if err := c.Start(t.Context()); !errors.Is(err, ErrRetrying) {
		t.Fatalf("Start = %v, want a retry", err)
	}
	select {
	case <-failed:
	case <-time.After(hangGuard):
		t.Fatal("the Conn did not give up")
	}
}

// countStarts is how many times a server's life lines say it started.
func countStarts(lines []string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "info starting: ") {
			n++
		}
	}
	return n
}

func TestPathShown(t *testing.T) {
	for _, tc := range []struct{ path, home, want string }{
		{"", "/home/u", "it is empty"},
		{"/usr/bin:/bin", "/home/u", "/usr/bin, /bin"},
		{"/home/u/.local/bin:/home/user2/bin:/usr/bin:/bin", "/home/u", "~/.local/bin, /home/user2/bin, /usr/bin, /bin"},
		{"/a:/b::/c:/d:/e:/f", "", "/a, /b, /c and 3 more directories"},
		{"/home/u:/x", "/home/u", "~, /x"},
		{"/a:/b", "/", "/a, /b"},
	} {
		if got := pathShown(tc.path, tc.home); got != tc.want {
			t.Errorf("pathShown(%q, %q) = %q, want %q", tc.path, tc.home, got, tc.want)
		}
	}
}
