//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

// watcherEnv makes the test binary the other local user's watcher
// (runWatcher) instead of the tests.
const watcherEnv = "FREECODE_TEST_WATCHER"

// otherUID is the other local user the watcher runs as: nobody, an
// account every Linux system has and no file of this test belongs to.
const otherUID = 65534

func init() {
	if os.Getenv(watcherEnv) == "1" {
		os.Exit(runWatcher())
	}
}

// watchReport is what the watcher found: what might sign in (URLs and
// code-like words, from argv, environments and the files these name
// that it could read), and the paths it could not read.
type watchReport struct {
	URLs   []string          `json:"urls"`
	Codes  []string          `json:"codes"`
	Read   []string          `json:"read"`
	Denied map[string]string `json:"denied"`
}

var (
	watchURL  = regexp.MustCompile(`https?://[^\s"'<>]+`)
	watchWord = regexp.MustCompile(`[A-Za-z0-9_-]{20,}`)
)

// runWatcher is the other local user of issue 30: it polls every
// process's /proc/PID/cmdline and /proc/PID/environ, reads each file an
// argument or variable names (a path or a file: URL), and keeps what
// could be a sign-in link or code. It writes "scan N" to stderr after
// each round, and its report to stdout once stdin closes.
func runWatcher() int {
	stop := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(stop)
	}()
	rep := watchReport{Denied: map[string]string{}}
	seen := map[string]bool{}
	var take func(s string, depth int)
	take = func(s string, depth int) {
		if seen[s] {
			return
		}
		seen[s] = true
		for _, u := range watchURL.FindAllString(s, -1) {
			rep.URLs = append(rep.URLs, u)
		}
		for _, w := range watchWord.FindAllString(s, -1) {
			if !slices.Contains(rep.Codes, w) {
				rep.Codes = append(rep.Codes, w)
			}
		}
		if depth > 0 {
			return
		}
		path := s
		if u, err := url.Parse(s); err == nil && u.Scheme == "file" {
			path = u.Path
		} else if _, after, ok := strings.Cut(s, "="); ok && strings.HasPrefix(after, "/") {
			path = after // an environment variable's value
		}
		if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "/proc/") || strings.HasPrefix(path, "/dev/") || strings.HasPrefix(path, "/sys/") {
			return
		}
		fi, err := os.Stat(path)
		if err != nil {
			if os.IsPermission(err) {
				rep.Denied[path] = err.Error()
			}
			return
		}
		if !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
			return
		}
		b, err := os.ReadFile(path)
		if err != nil {
			rep.Denied[path] = err.Error()
			return
		}
		rep.Read = append(rep.Read, path)
		take(string(b), depth+1)
	}
	self := strconv.Itoa(os.Getpid())
	for scan := 1; ; scan++ {
		procs, _ := os.ReadDir("/proc")
		for _, p := range procs {
			if _, err := strconv.Atoi(p.Name()); err != nil || p.Name() == self {
				continue
			}
			for _, part := range []string{"cmdline", "environ"} {
				b, err := os.ReadFile(filepath.Join("/proc", p.Name(), part))
				if err != nil {
					continue // another user's environ: not ours to read
				}
				for _, s := range bytes.Split(b, []byte{0}) {
					take(string(s), 0)
				}
			}
		}
		fmt.Fprintf(os.Stderr, "scan %d\n", scan)
		select {
		case <-stop:
			if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
				return 1
			}
			return 0
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// procWatcher is runWatcher running as otherUID.
type procWatcher struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	scans <-chan int // the latest scan's number; closed when it ends
	out   bytes.Buffer
}

// startWatcher starts runWatcher as otherUID, from a copy of the test
// binary that user can run, and returns once it scanned once.
func startWatcher(t *testing.T) *procWatcher {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary's directory is go test's, which only its user
	// enters: a copy in one anybody may enter.
	dir, err := os.MkdirTemp("", "freecode-watcher")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "watcher")
	if err := os.Link(exe, bin); err != nil {
		b, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{dir, bin} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w := &procWatcher{cmd: exec.Command(bin, "-test.run=^$")}
	w.cmd.Dir = "/"
	w.cmd.Env = []string{watcherEnv + "=1", "PATH=/usr/bin:/bin"}
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID}}
	w.cmd.Stdout = &w.out
	if w.in, err = w.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	errPipe, err := w.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		t.Fatalf("starting the watcher as uid %d: %v", otherUID, err)
	}
	scans := make(chan int, 1)
	w.scans = scans
	go func() {
		defer close(scans)
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			var n int
			if _, err := fmt.Sscanf(sc.Text(), "scan %d", &n); err != nil {
				fmt.Fprintf(os.Stderr, "watcher: %s\n", sc.Text())
				continue
			}
			select {
			case <-scans: // the latest only
			default:
			}
			scans <- n
		}
	}()
	t.Cleanup(func() {
		w.in.Close()
		w.cmd.Process.Kill()
		w.cmd.Wait()
	})
	if _, ok := <-w.scans; !ok {
		t.Fatal("the watcher ended before its first scan")
	}
	return w
}

// report waits for n more scans, then ends the watcher and returns what
// it found.
func (w *procWatcher) report(t *testing.T, n int) watchReport {
	t.Helper()
	first, ok := <-w.scans
	for last := first; ok && last < first+n; last, ok = <-w.scans {
	}
	if !ok {
		t.Fatal("the watcher ended early")
	}
	w.in.Close()
	done := make(chan error, 1)
	go func() { done <- w.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the watcher: %v", err)
		}
	case <-time.After(hangGuard):
		w.cmd.Process.Kill()
		t.Fatal("the watcher did not report")
	}
	var rep watchReport
	if err := json.Unmarshal(w.out.Bytes(), &rep); err != nil {
		t.Fatalf("the watcher's report: %v", err)
	}
	return rep
}

// Issue 30: the sign-in `freecode web` hands the browser is nothing another
// local user can read. A watcher running as another uid polls every
// process's argv and environment while `freecode web` opens the page with
// a $BROWSER that stays open, as a browser does, and reads every file
// named there; nothing it found signs in (each URL and word is tried at
// the sign-in, GET and POST), it saw the file the browser was given and
// could not read it, and the browser's argv and environment hold no code.
// The file (0600, in a 0700 directory) does sign in, once, and is gone
// once it did.
func TestWebSignInUnreadable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skipf("the watcher runs as another local user (uid %d), which only root can start; run as root (CI does)", otherUID)
	}
	e := newLiveEnv(t)
	serveFile := filepath.Join(e.home, ".freecode", "serve.json")
	w := startWatcher(t)

	rec := t.TempDir()
	browser := filepath.Join(rec, "browser")
	script := `#!/bin/sh
printf '%s\n' "$@" >"$0.argv"
env >"$0.env"
echo $$ >"$0.pid.tmp" && mv "$0.pid.tmp" "$0.pid"
i=0
while [ ! -e "$0.stop" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
`
	if err := os.WriteFile(browser, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	out, errOut := runWeb(t, e, []string{"BROWSER=" + browser})
	sf, err := protocol.ReadServeFile(serveFile)
	if err != nil {
		t.Fatalf("no serve.json after freecode web: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	t.Cleanup(func() { stopSidecar(t, serveFile, sf.PID) })
	host := strings.TrimPrefix(sf.Address, "ws://")

	// The browser is open; the watcher looks twice more, then reports.
	pidText, err := os.ReadFile(browser + ".pid")
	if err != nil {
		t.Fatalf("$BROWSER did not run: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	browserPID, _ := strconv.Atoi(strings.TrimSpace(string(pidText)))
	stopBrowserAtCleanup(t, browser, browserPID)
	rep := w.report(t, 2)
	t.Logf("the watcher found %d URLs and %d words, read %v, was denied %d files", len(rep.URLs), len(rep.Codes), rep.Read, len(rep.Denied))

	// Everything it found, tried as the attacker would, before the browser.
	page := "http://" + host
	tried := 0
	for _, u := range rep.URLs {
		if pu, err := url.Parse(u); err == nil && pu.Host == host {
			tried++
			if c := signInGET(t, u); c != nil {
				t.Errorf("the other user signed in with %s, a URL it read in argv, an environment or a file", u)
			}
		}
	}
	for _, code := range rep.Codes {
		tried++
		if c := signInGET(t, page+"/?code="+url.QueryEscape(code)); c != nil {
			t.Errorf("the other user signed in with the code %s (GET)", code)
		}
		if c := signInPOST(t, page+"/signin", code); c != nil {
			t.Errorf("the other user signed in with the code %s (POST)", code)
		}
	}
	t.Logf("tried %d things the watcher found at the sign-in", tried)

	// What the browser was given: the file's URL, and nothing else.
	argv, err := os.ReadFile(browser + ".argv")
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Fields(string(argv))
	if len(args) != 1 {
		t.Fatalf("$BROWSER was given %q, want the sign-in file's URL", args)
	}
	file, action, code := readSignInFile(t, args[0])
	if _, ok := rep.Denied[file]; !ok {
		t.Errorf("the watcher did not see %s, or could read it: denied %v, read %v", file, rep.Denied, rep.Read)
	}
	for path, want := range map[string]os.FileMode{file: 0o600, filepath.Dir(file): 0o700 | os.ModeDir} {
		if fi, err := os.Lstat(path); err != nil || fi.Mode() != want {
			t.Errorf("%s: %v (%v), want %v", path, fi.Mode(), err, want)
		}
	}
	env, _ := os.ReadFile(browser + ".env")
	if strings.Contains(string(argv), code) || strings.Contains(string(env), code) {
		t.Errorf("the browser's argv or environment holds the code:\n%s\n%s", argv, env)
	}
	if action != page+"/signin" {
		t.Errorf("the form posts to %s, want %s/signin", action, page)
	}
	// The browser: the form, posted.
	if c := signInPOST(t, action, code); c == nil {
		t.Error("the file did not sign the browser in")
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the file is still there once its code was spent: %v", err)
	}
	if c := signInPOST(t, action, code); c != nil {
		t.Error("the file's code signed in twice")
	}
}

// signInGET opens a sign-in URL; the session cookie it set, nil if none.
func signInGET(t *testing.T, u string) *http.Cookie {
	t.Helper()
	c, err := servertest.SignIn(t.Context(), u)
	if err != nil {
		return nil
	}
	return c
}

// stopBrowserAtCleanup has the stand-in browser script (the one $BROWSER
// names, running as pid) stop when the test ends, and waits for it.
func stopBrowserAtCleanup(t *testing.T, browser string, pid int) {
	t.Cleanup(func() {
		os.WriteFile(browser+".stop", nil, 0o600)
		for deadline := time.Now().Add(hangGuard); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			var ws syscall.WaitStatus
			syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			if syscall.Kill(pid, 0) != nil {
				return
			}
		}
		t.Errorf("the browser script (pid %d) did not stop", pid)
	})
}
