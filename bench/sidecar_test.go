package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
)

// hangGuard bounds every wait, so a broken benchmark fails instead of
// hanging; no figure depends on it.
const hangGuard = 2 * time.Minute

// entry is a config entry of a local server.
type entry struct {
	Name    string            `json:"name"`
	Type    string            `json:"type"`
	Command []string          `json:"command"`
	Env     map[string]string `json:"env,omitempty"`
	// InheritEnv passes FREECODE_NPM and PATH's node on to npm servers.
	InheritEnv bool `json:"inheritEnv,omitempty"`
	Timeout    int  `json:"timeout,omitempty"`
	// ProtocolVersion pins the MCP revision the sidecar speaks to it.
	ProtocolVersion string `json:"protocolVersion,omitempty"`
}

// selfServer is the entry of this test binary as an MCP server in mode.
func selfServer(b *testing.B, name, mode string) entry {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	return entry{Name: name, Type: "local", Command: []string{exe}, Env: map[string]string{mcpServerEnv: mode}}
}

// selfServers returns n entries of this test binary in mode, named
// prefix0, prefix1, …, and their names.
func selfServers(b *testing.B, n int, prefix, mode string) ([]entry, []string) {
	var entries []entry
	var names []string
	for i := range n {
		name := fmt.Sprintf("%s%02d", prefix, i)
		entries = append(entries, selfServer(b, name, mode))
		names = append(names, name)
	}
	return entries, names
}

// samples are named latencies, for report.
type samples struct {
	name string
	ds   []time.Duration
}

// report reports the p50 and p99 of each set of samples, in the unit
// ("µs" or "ms") given.
func report(b *testing.B, unit string, sets ...samples) {
	conv := ms
	if unit == "µs" {
		conv = us
	}
	for _, s := range sets {
		b.ReportMetric(conv(percentile(s.ds, 50)), s.name+"-p50-"+unit)
		b.ReportMetric(conv(percentile(s.ds, 99)), s.name+"-p99-"+unit)
	}
}

// writeConfig writes a config of servers in a new directory, which also
// holds the sidecar's HOME, and returns the config's path.
func writeConfig(b *testing.B, servers []entry) string {
	data, err := json.Marshal(map[string]any{"mcp": map[string]any{"servers": servers}})
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "config.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// sidecar is a sidecar with a Go frontend on it (a freecode-serve
// process over stdio, or one in this process: cmd nil), and the time each
// server first reported connected.
type sidecar struct {
	*frontend.Client
	cmd     *exec.Cmd
	started time.Time
	// onNote, if set, is given every notification too.
	onNote atomic.Pointer[func(frontend.Notification)]

	// mu guards the fields below; cond waits on it.
	mu        sync.Mutex
	cond      *sync.Cond
	connected map[string]time.Time
}

// startSidecar starts freecode-serve on the config, as an editor does,
// and initializes it. Stop it with stop.
func startSidecar(b *testing.B, cfg string) *sidecar {
	b.Helper()
	return startSidecarEnv(b, cfg, os.Environ())
}

// startSidecarEnv is startSidecar with the sidecar's environment env
// (HOME added).
func startSidecarEnv(b *testing.B, cfg string, env []string) *sidecar {
	b.Helper()
	sidecarBin, _ := binaries(b)
	return startSidecarBin(b, sidecarBin, cfg, env)
}

// startSidecarBin is startSidecarEnv with the freecode-serve at bin.
func startSidecarBin(b *testing.B, bin, cfg string, env []string) *sidecar {
	b.Helper()
	cmd := exec.Command(bin, "--log-level", "error")
	cmd.Env = append(env, "HOME="+filepath.Dir(cfg))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	started := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	s := newSidecar(b, stdio{stdout, stdin}, cfg)
	s.cmd, s.started = cmd, started
	return s
}

// newSidecar connects a Go frontend to the sidecar at the other end of
// rwc and initializes it, with cfg's directory as its folder.
func newSidecar(b *testing.B, rwc io.ReadWriteCloser, cfg string) *sidecar {
	b.Helper()
	s := &sidecar{connected: make(map[string]time.Time), started: time.Now()}
	s.cond = sync.NewCond(&s.mu)
	s.Client = frontend.New(rwc, &frontend.Options{
		Folders: []string{filepath.Dir(cfg)}, ConfigPath: cfg, OnNotification: s.note,
	})
	if _, err := s.Initialize(b.Context()); err != nil {
		b.Fatal(err)
	}
	return s
}

// stdio is the sidecar's stdout and stdin as one connection.
type stdio struct {
	io.ReadCloser
	io.WriteCloser
}

func (s stdio) Close() error { return errors.Join(s.WriteCloser.Close(), s.ReadCloser.Close()) }

func (s *sidecar) note(n frontend.Notification) {
	if f := s.onNote.Load(); f != nil {
		(*f)(n)
	}
	if n.Method != protocol.NotifyServersStatus {
		return
	}
	var st protocol.ServerStatus
	if json.Unmarshal(n.Params, &st) != nil || st.State != protocol.StateConnected {
		return
	}
	now := time.Now()
	s.mu.Lock()
	if _, ok := s.connected[st.Name]; !ok {
		s.connected[st.Name] = now
		s.cond.Broadcast()
	}
	s.mu.Unlock()
}

// awaitConnected waits until every server of names has reported
// connected and returns how long after the sidecar's start each did.
func (s *sidecar) awaitConnected(b *testing.B, names []string) []time.Duration {
	b.Helper()
	timer := time.AfterFunc(hangGuard, func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer timer.Stop()
	deadline := time.Now().Add(hangGuard)
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		out := make([]time.Duration, 0, len(names))
		for _, n := range names {
			if at, ok := s.connected[n]; ok {
				out = append(out, at.Sub(s.started))
			}
		}
		if len(out) == len(names) {
			return out
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d servers connected within %v", len(out), len(names), hangGuard)
		}
		s.cond.Wait()
	}
}

// stop shuts the sidecar down (every server stopped and reaped), sends
// exit and waits for it to end; the pipes are closed last, or a write
// of its own after exit would kill it with SIGPIPE.
func (s *sidecar) stop(b *testing.B) {
	b.Helper()
	if err := s.Shutdown(b.Context()); err != nil {
		b.Errorf("shutdown: %v", err)
	}
	s.Exit(b.Context())
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			b.Errorf("freecode-serve: %v", err)
		}
	case <-time.After(hangGuard):
		s.cmd.Process.Kill()
		<-done
		b.Errorf("freecode-serve did not exit")
	}
	s.Close()
}

// percentile returns the p-th percentile (0–100) of samples, which it
// sorts.
func percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	slices.Sort(samples)
	i := int(float64(len(samples)-1) * p / 100)
	return samples[i]
}

// us is d in microseconds.
func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// rssKiB returns the resident set of pid, in KiB.
func rssKiB(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
	return 0, errors.New("no VmRSS")
}

// treeRSSKiB returns the resident set of pid and all its descendants,
// and how many processes that is.
func treeRSSKiB(pid int) (kib, procs int, err error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, 0, err
	}
	children := make(map[int][]int)
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parens.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+2:])
		fields := strings.Fields(rest)
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		children[ppid] = append(children[ppid], p)
	}
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		r, err := rssKiB(p)
		if err != nil {
			continue // gone meanwhile
		}
		kib += r
		procs++
		queue = append(queue, children[p]...)
	}
	return kib, procs, nil
}
