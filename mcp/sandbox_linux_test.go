package mcp

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/freecode/freecode/config"
)

// inDir returns the pids of the processes whose working directory is
// dir: a sandboxed server and what it started (bwrap starts it there).
func inDir(t *testing.T, dir string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == dir {
			pids = append(pids, pid)
		}
	}
	return pids
}

// A project's server runs in a sandbox though its entry says nothing of
// one: under bwrap, with the proxy's bridge (the default network is the
// allow-list), a private /tmp, and connected all the same.
func TestProjectServerStartsSandboxed(t *testing.T) {
	bwrap := needBwrap(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	settings := config.ProjectSettingsPath(project)
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	entry := fmt.Sprintf(`{"mcp": {"servers": [{"name": "repo", "command": [%q, "printenv"], "cwd": ".", "env": {%q: "1"}, "timeout": 60000}]}}`, exe, testServerEnv)
	if err := os.WriteFile(settings, []byte(entry), 0o600); err != nil {
		t.Fatal(err)
	}
	servers, err := config.LoadProject(project)
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 1 || !servers[0].Sandboxed() {
		t.Fatalf("the project's server is not to be sandboxed: %+v", servers)
	}
	c := NewConn(servers[0], &ConnOptions{NoRetry: true})
	defer c.Close()
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	st := c.Status()
	if prog, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", st.PID)); err != nil || prog != bwrap {
		t.Errorf("the server's process runs %q (%v), want %s", prog, err, bwrap)
	}
	env := strings.Join(st.StderrTail, "\n")
	for _, want := range []string{"TMPDIR=/tmp", "HTTPS_PROXY=http://127.0.0.1:", "NODE_USE_ENV_PROXY=1"} {
		if !strings.Contains(env, want) {
			t.Errorf("the server's environment has no %s:\n%s", want, env)
		}
	}
}

// A sandboxed server that started a daemon (double fork, setsid): the
// server's stop ends it, as it ends the processes of an unsandboxed one.
func TestSandboxedServerStopEndsDaemon(t *testing.T) {
	needBwrap(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := NewConn(config.Server{
		Name: "escaper", Type: config.TypeLocal, Enabled: true, Cwd: dir,
		Command: []string{exe, "escape=" + filepath.Join(dir, "daemon")},
		Env:     map[string]string{testServerEnv: "1"},
		Timeout: time.Minute, Sandbox: &config.Sandbox{Network: config.NetworkNone},
	}, &ConnOptions{NoRetry: true})
	if err := c.Start(t.Context()); err != nil {
		c.Close()
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "daemon")); err != nil {
		t.Errorf("the daemon did not write its pid into the server's cwd: %v", err)
	}
	// bwrap, its first process in the sandbox, the server, the daemon.
	if pids := inDir(t, dir); len(pids) < 4 {
		t.Errorf("%d processes in %s, want bwrap's two, the server and its daemon", len(pids), dir)
	}
	c.Close()
	if pids := inDir(t, dir); len(pids) != 0 {
		t.Errorf("processes %v are left in %s after the stop", pids, dir)
	}
}

// A FreeCode process whose sandboxed server started a daemon is killed
// with SIGKILL: nothing of the sandbox lives on, the daemon included (its
// pid namespace dies with bwrap, which dies with its FreeCode process);
// the placeholders its sandbox put in the project stay behind until the
// next FreeCode process starts, which removes them.
func TestSandboxedDaemonEndsAfterKill9(t *testing.T) {
	needBwrap(t)
	dir, run := t.TempDir(), t.TempDir()
	owner, _ := startSandboxOwner(t, dir, run, "daemon")
	pids := inDir(t, dir)
	if len(pids) < 4 {
		t.Errorf("%d processes in %s, want bwrap's two, the server and its daemon", len(pids), dir)
	}
	var fds []unix.PollFd
	for _, pid := range pids {
		if fd, err := unix.PidfdOpen(pid, 0); err == nil {
			defer unix.Close(fd)
			fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
		}
	}
	if err := owner.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	owner.Wait()
	// A pidfd is readable once its process has exited: wait for each.
	for _, fd := range fds {
		for {
			one := []unix.PollFd{fd}
			if _, err := unix.Poll(one, -1); err == nil || err != unix.EINTR {
				break
			}
		}
	}
	if left := inDir(t, dir); len(left) != 0 {
		t.Errorf("processes %v are left in %s", left, dir)
	}

	placeholders := []string{".mcp.json", ".npmrc", ".vscode", ".claude", ".cursor", ".idea", ".freecode"}
	for _, name := range placeholders {
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
			t.Errorf("no placeholder %s after the kill (what this test is about): %v", name, err)
		}
	}
	runNextFreeCode(t, run)
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, []string{"daemon"}) {
		t.Errorf("in the project after the next start: %q; want the daemon's own file alone", left)
	}
	if records, _ := os.ReadDir(run); len(records) != 0 {
		t.Errorf("run records left: %v", records)
	}
}

// Without bwrap a sandboxed server does not start, unsandboxed or at all:
// its status says why and what to do.
func TestSandboxedServerWithoutBwrap(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir()) // no bwrap there
	c := NewConn(config.Server{
		Name: "s", Type: config.TypeLocal, Enabled: true, Cwd: t.TempDir(),
		Command: []string{exe}, Env: map[string]string{testServerEnv: "1"},
		Timeout: time.Minute, Sandbox: &config.Sandbox{},
	}, &ConnOptions{NoRetry: true})
	defer c.Close()
	err = c.Start(t.Context())
	want := `bubblewrap (bwrap) is not installed, and this server is to run in a sandbox: install it`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `"sandbox": false`) {
		t.Fatalf("Start: %v, want an error saying %q", err, want)
	}
	if st := c.Status(); st.State != StateFailed || !strings.Contains(st.LastError, want) || st.PID != 0 {
		t.Errorf("status: %s, pid %d, %q", st.State, st.PID, st.LastError)
	}
}

// A sandboxed server that fails on a path it may not write: its status
// names the path and the line that would allow it.
func TestSandboxedServerDenialInStatus(t *testing.T) {
	needBwrap(t)
	c := NewConn(config.Server{
		Name: "s", Type: config.TypeLocal, Enabled: true, Cwd: t.TempDir(),
		Command: []string{"sh", "-c", "echo x > /usr/freecode-denied; exit 1"},
		Timeout: time.Minute, Sandbox: &config.Sandbox{Network: config.NetworkNone},
	}, &ConnOptions{NoRetry: true})
	defer c.Close()
	if err := c.Start(t.Context()); err == nil {
		t.Fatal("the server started")
	}
	st := c.Status()
	for _, want := range []string{
		"the sandbox kept the server from writing /usr/freecode-denied",
		`to allow it, set in the server's entry: "sandbox":{"filesystem":{"allowWrite":["/usr"]}}`,
	} {
		if !strings.Contains(st.LastError, want) {
			t.Errorf("the status's error does not say %q: %s", want, st.LastError)
		}
	}
	if _, err := os.Stat("/usr/freecode-denied"); err == nil {
		os.Remove("/usr/freecode-denied")
		t.Error("the file was written")
	}
}

// A package runner in a sandbox that does not reach its registry waits
// for it in vain (npm retries for over a minute): the row says why at
// once, with the line that lets it, instead of "connecting…" all along.
func TestSandboxedRunnerWithoutRegistrySaysWhy(t *testing.T) {
	needBwrap(t)
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skip("npx is not installed")
	}
	said := make(chan string, 8)
	c := NewConn(config.Server{
		Name: "offline", Type: config.TypeLocal, Enabled: true, Cwd: t.TempDir(), Timeout: time.Minute,
		// A package no cache holds: npx must ask the registry.
		Command: []string{npx, "-y", "@freecode-test/not-installed-anywhere@1.0.0"},
		Sandbox: &config.Sandbox{Network: config.NetworkNone},
	}, &ConnOptions{NoRetry: true, OnStatus: func(st Status) {
		if st.State == StateConnecting && st.LastError != "" {
			select {
			case said <- st.LastError:
			default:
			}
		}
	}})
	defer c.Close()
	go c.Start(t.Context())
	select {
	case msg := <-said:
		want := `sandboxed: no network; npx is waiting for registry.npmjs.org, which the sandbox does not reach: unless the package is in its cache it will not install; to let it, set in the server's entry: "sandbox":{"network":{"allowedDomains":["registry.npmjs.org"]}}`
		if msg != want {
			t.Errorf("the row says %q, want %q", msg, want)
		}
	case <-time.After(time.Minute):
		t.Fatal("nothing said why the server waits")
	}
}

func TestOfflineFor(t *testing.T) {
	srv := func(b *config.Sandbox, argv ...string) config.Server {
		return config.Server{Type: config.TypeLocal, Command: argv, Sandbox: b}
	}
	for _, tc := range []struct {
		srv  config.Server
		want string
	}{
		{srv(nil, "npx", "-y", "pkg"), ""},               // not sandboxed
		{srv(&config.Sandbox{}, "npx", "-y", "pkg"), ""}, // the default allow-list is the registry
		{srv(&config.Sandbox{Network: config.NetworkAll}, "uvx", "pkg"), ""},
		{srv(&config.Sandbox{Network: config.NetworkDomains, AllowedDomains: []string{"api.example.com"}}, "npx", "pkg"),
			`sandboxed: network only to api.example.com; npx is waiting for registry.npmjs.org, which the sandbox does not reach: unless the package is in its cache it will not install; to let it, set in the server's entry: "sandbox":{"network":{"allowedDomains":["api.example.com","registry.npmjs.org"]}}`},
		{srv(&config.Sandbox{Network: config.NetworkNone}, "uvx", "pkg"),
			`sandboxed: no network; uvx is waiting for pypi.org, which the sandbox does not reach: unless the package is in its cache it will not install; to let it, set in the server's entry: "sandbox":{"network":{"allowedDomains":["pypi.org"]}}`},
	} {
		if got := offlineFor(tc.srv, runnerOf(tc.srv.Command)); got != tc.want {
			t.Errorf("offlineFor(%v, %+v):\n%s\nwant\n%s", tc.srv.Command, tc.srv.Sandbox, got, tc.want)
		}
	}
}

// A dead FreeCode process's placeholder that the sandbox of a live one
// binds (it was there when that sandbox started) is left where it is by
// the next FreeCode process: removing it would detach the live sandbox's
// bind, and its server could then create the file it keeps it from.
func TestPlaceholderBoundByALiveSandboxStays(t *testing.T) {
	needBwrap(t)
	dir, run := t.TempDir(), t.TempDir()
	mcpJSON := filepath.Join(dir, ".mcp.json")
	if err := os.WriteFile(mcpJSON, nil, 0o644); err != nil { // the dead one's placeholder
		t.Fatal(err)
	}
	fi, err := os.Lstat(mcpJSON)
	if err != nil {
		t.Fatal(err)
	}
	owner, _ := startSandboxOwner(t, dir, run, "daemon")
	defer func() { owner.Process.Kill(); owner.Wait() }()
	// The record of a dead FreeCode process (pid 1 started at another time)
	// that made the .mcp.json the live owner's sandbox binds.
	dead := fmt.Sprintf(`{"version":1,"bootID":%q,"owner":{"pid":1,"start":1},"placeholders":[{"path":%q,"modTime":%d}]}`,
		bootID(t), mcpJSON, fi.ModTime().UnixNano())
	if err := os.WriteFile(filepath.Join(run, "1.json"), []byte(dead), 0o600); err != nil {
		t.Fatal(err)
	}
	runNextFreeCode(t, run)
	if _, err := os.Lstat(mcpJSON); err != nil {
		t.Errorf("the placeholder a live sandbox binds was removed: %v", err)
	}
}

// startSandboxOwner starts the test binary as a FreeCode process that
// records in run and runs a sandboxed server in dir, which starts a daemon
// that writes its pid to dir/daemon (runEscapeOwner), and returns once it
// says it is ready; env is added to its environment, stdin is its stdin.
func startSandboxOwner(t *testing.T, dir, run, daemon string, env ...string) (owner *exec.Cmd, stdin io.WriteCloser) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	owner = exec.Command(exe)
	owner.Env = append(os.Environ(), testOwnerEnv+"="+run, testOwnerEscapeEnv+"="+filepath.Join(dir, daemon), testOwnerSandboxEnv+"="+dir)
	owner.Env = append(owner.Env, env...)
	owner.Stderr = os.Stderr
	if stdin, err = owner.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.HasPrefix(line, "ready ") {
		owner.Process.Kill()
		owner.Wait()
		t.Fatalf("owner said %q (%v)", line, err)
	}
	return owner, stdin
}

// bootID is this boot's id, as run records hold it.
func bootID(t *testing.T) string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Skip("no boot id to write a run record with")
	}
	return strings.TrimSpace(string(b))
}

// A FreeCode process that stops its sandboxed server (a clean stop) does
// not remove a placeholder of its own that the sandbox of another running
// FreeCode process binds: that would detach the other's bind, and its
// server could create the file. It stays, recorded as the first one's, and
// the FreeCode process that starts once neither runs removes it.
func TestPlaceholderKeptWhileAnotherSandboxBindsIt(t *testing.T) {
	needBwrap(t)
	dir, run := t.TempDir(), t.TempDir()
	maker, makerIn := startSandboxOwner(t, dir, run, "daemon-maker", testOwnerStopEnv+"=1")
	defer func() { maker.Process.Kill(); maker.Wait() }()
	mcpJSON := filepath.Join(dir, ".mcp.json")
	if _, err := os.Lstat(mcpJSON); err != nil {
		t.Fatalf("no placeholder made: %v", err)
	}
	binder, _ := startSandboxOwner(t, dir, run, "daemon-binder")
	defer func() { binder.Process.Kill(); binder.Wait() }()

	makerIn.Close() // the maker stops its server and exits
	if err := maker.Wait(); err != nil {
		t.Fatalf("the maker's clean stop: %v", err)
	}
	if _, err := os.Lstat(mcpJSON); err != nil {
		t.Errorf("the maker's stop removed the placeholder the binder's sandbox binds: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".npmrc")); err != nil {
		t.Errorf("the maker's stop removed the .npmrc placeholder the binder's sandbox binds: %v", err)
	}

	binder.Process.Kill()
	binder.Wait()
	runNextFreeCode(t, run)
	for _, name := range []string{".mcp.json", ".npmrc", ".vscode"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s is still there once neither runs and the next FreeCode process started: %v", name, err)
		}
	}
}
