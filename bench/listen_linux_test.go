// The benchmark reads the sidecar's RSS and CPU time from /proc.

package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
)

// hostileConns is how many unauthenticated connections attack the
// sidecar at once in BenchmarkListenHostile.
const hostileConns = 1000

// maxHostileRSSMiB is what the sidecar's resident set must stay under
// while they do.
const maxHostileRSSMiB = 150

// BenchmarkListenHostile measures a listening freecode-serve (tcp:
// loopback) under hostile local clients: hostileConns connections that
// never present the token and send oversized frames (half announce a
// gigabyte and send the start of its body, half send a header line that
// never ends), each connecting again as soon as the sidecar closes it,
// while one authenticated frontend runs echo calls through the sidecar
// (frontend → sidecar → MCP server over stdio → back). The timed loop is
// the echo call under that load. The metrics are the echo call's p50 and
// p99 unloaded (before the attack) and loaded, the sidecar's CPU use in
// both, its largest resident set during the attack (sampled every 20 ms),
// how many hostile connections it closed per second meanwhile, and how
// long a new frontend took to connect and initialize in the middle of it.
// It fails if the sidecar's resident set reaches maxHostileRSSMiB or it
// stops serving.
func BenchmarkListenHostile(b *testing.B) {
	raiseFileLimit(b, 2*hostileConns+256)
	srv := selfServer(b, "s", "echo")
	srv.Timeout = 30000
	cfg := writeConfig(b, []entry{srv})
	ls := startListening(b, cfg)
	defer ls.stop(b)
	ls.awaitTool(b, "mcp__s__echo")

	args := json.RawMessage(`{"text":"hello"}`)
	execute := func() time.Duration {
		start := time.Now()
		res, err := ls.Execute(b.Context(), protocol.ToolCall{CallID: "c", Tool: "mcp__s__echo", Arguments: args})
		d := time.Since(start)
		if err != nil || len(res) != 1 || res[0].IsError {
			b.Fatalf("execute: %v %+v", err, res)
		}
		return d
	}
	const warm, n = 1000, 3000
	for range warm {
		execute()
	}
	var unloaded, loaded []time.Duration
	cpuStart, timeStart := cpuTicks(ls.cmd.Process.Pid), time.Now()
	for range n {
		unloaded = append(unloaded, execute())
	}
	unloadedCPU := float64(cpuTicks(ls.cmd.Process.Pid)-cpuStart) / clockTicks / time.Since(timeStart).Seconds()
	idleRSS, err := rssKiB(ls.cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}

	ctx, cancel := context.WithCancel(b.Context())
	var attackers sync.WaitGroup
	var dials, closed atomic.Int64
	started := time.Now()
	for i := range hostileConns {
		attackers.Go(func() { attack(ctx, strings.TrimPrefix(ls.addr, "tcp:"), i%2 == 0, &dials, &closed) })
	}
	var maxRSS atomic.Int64
	var sampler sync.WaitGroup
	sampler.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if kib, err := rssKiB(ls.cmd.Process.Pid); err == nil && int64(kib) > maxRSS.Load() {
				maxRSS.Store(int64(kib))
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	// Let every attacker get going before timing.
	for dials.Load() < hostileConns && time.Since(started) < hangGuard {
		time.Sleep(10 * time.Millisecond)
	}

	cpuStart, timeStart = cpuTicks(ls.cmd.Process.Pid), time.Now()
	closedStart := closed.Load()
	b.ResetTimer()
	for b.Loop() {
		execute()
	}
	b.StopTimer()
	for range n {
		loaded = append(loaded, execute())
	}
	loadedTime := time.Since(timeStart).Seconds()
	loadedCPU := float64(cpuTicks(ls.cmd.Process.Pid)-cpuStart) / clockTicks / loadedTime
	closedRate := float64(closed.Load()-closedStart) / loadedTime
	// A new frontend (the CLI's status, say) waits its turn behind the
	// strangers in the listener's backlog.
	connectStart := time.Now()
	newcomer, err := frontend.DialServeFile(b.Context(), ls.serveFile, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := newcomer.Initialize(b.Context()); err != nil {
		b.Errorf("a new frontend during the attack: %v", err)
	}
	connect := time.Since(connectStart)
	newcomer.Close()
	cancel()
	attackers.Wait()
	sampler.Wait()

	// It still serves, the authenticated frontend and a new one alike.
	if _, err := ls.Servers(b.Context()); err != nil {
		b.Errorf("freecode/servers after the attack: %v", err)
	}
	fresh, err := frontend.DialServeFile(b.Context(), ls.serveFile, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := fresh.Initialize(b.Context()); err != nil {
		b.Errorf("a new frontend after the attack: %v", err)
	}
	fresh.Close()

	report(b, "µs", samples{"unloaded", unloaded}, samples{"loaded", loaded})
	b.ReportMetric(float64(idleRSS)/1024, "idle-rss-MiB")
	b.ReportMetric(float64(maxRSS.Load())/1024, "max-rss-MiB")
	b.ReportMetric(closedRate, "hostile-closed/s")
	b.ReportMetric(100*unloadedCPU, "unloaded-sidecar-cpu-%")
	b.ReportMetric(100*loadedCPU, "loaded-sidecar-cpu-%")
	b.ReportMetric(ms(connect), "loaded-new-frontend-ms")
	if mib := maxRSS.Load() / 1024; mib >= maxHostileRSSMiB {
		b.Errorf("the sidecar's resident set reached %d MiB under attack, want under %d", mib, maxHostileRSSMiB)
	}
}

// attack connects to addr again and again until ctx ends, each time
// sending an oversized frame: a gigabyte announced and the first 64 KiB
// of its body (announce), or 64 KiB of a header line that has no end.
// Then it waits for the sidecar to close the connection (counted in
// closed), and connects again (counted in dials).
func attack(ctx context.Context, addr string, announce bool, dials, closed *atomic.Int64) {
	msg := bytes.Repeat([]byte{'a'}, 64<<10)
	if announce {
		msg = append([]byte("Content-Length: 1000000000\r\n\r\n"), msg...)
	}
	var d net.Dialer
	for ctx.Err() == nil {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			select { // the backlog is full, or ctx ended
			case <-ctx.Done():
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		dials.Add(1)
		stop := context.AfterFunc(ctx, func() { c.Close() })
		if _, err := c.Write(msg); err == nil {
			io.Copy(io.Discard, c) // until the sidecar closes it
		}
		if stop() { // the sidecar closed it, not ctx
			closed.Add(1)
		}
		c.Close()
	}
}

// clockTicks is the unit of /proc/PID/stat's times: USER_HZ, 100 on
// every Linux.
const clockTicks = 100

// cpuTicks returns the CPU time pid has used, user and system, in
// clockTicks; 0 if it cannot be read.
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// pid (comm) state ppid …: utime and stime are the 14th and 15th
	// fields, the 12th and 13th after comm.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return utime + stime
}

// raiseFileLimit makes sure this process may hold want descriptors,
// raising its soft limit up to the hard one, or skips the benchmark.
func raiseFileLimit(b *testing.B, want uint64) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatal(err)
	}
	if lim.Cur >= want {
		return
	}
	if lim.Max < want {
		b.Skipf("the hard limit of open files is %d; the benchmark needs %d (ulimit -Hn)", lim.Max, want)
	}
	lim.Cur = want
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatal(err)
	}
}

// listening is a freecode-serve process listening on loopback TCP, with
// an authenticated Go frontend on it.
type listening struct {
	*frontend.Client
	cmd       *exec.Cmd
	addr      string // host:port
	serveFile string
	exited    chan struct{}
}

// startListening starts `freecode-serve --listen tcp:127.0.0.1:0` on the
// config, with HOME beside it, and connects a frontend found through its
// serve.json. Stop it with stop.
func startListening(b *testing.B, cfg string) *listening {
	b.Helper()
	return startListeningOn(b, cfg, "tcp:127.0.0.1:0")
}

// startListeningOn is startListening on the listen address given
// (unix:PATH, tcp:… or ws://…). ls.addr is what it listens on, as
// serve.json spells it.
func startListeningOn(b *testing.B, cfg, listen string) *listening {
	b.Helper()
	sidecarBin, _ := binaries(b)
	dir := filepath.Dir(cfg)
	ls := &listening{serveFile: filepath.Join(dir, ".freecode", "serve.json"), exited: make(chan struct{})}
	ls.cmd = exec.Command(sidecarBin, "--listen", listen, "--project", dir, "--config", cfg, "--log-level", "info")
	ls.cmd.Env = append(os.Environ(), "HOME="+dir)
	stderr, err := ls.cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := ls.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	up := make(chan string, 1)
	go func() {
		// Drained to the end: a sidecar whose stderr is full stops.
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, addr, ok := strings.Cut(sc.Text(), "address="); ok && (strings.Contains(sc.Text(), "msg=listening") || strings.HasPrefix(sc.Text(), "INFO listening ")) {
				addr, _, _ = strings.Cut(addr, " ")
				up <- addr
			}
		}
		ls.cmd.Wait()
		close(ls.exited)
	}()
	select {
	case ls.addr = <-up:
	case <-ls.exited:
		b.Fatal("freecode-serve exited before it listened")
	case <-time.After(hangGuard):
		b.Fatal("freecode-serve did not listen")
	}
	ls.Client, err = frontend.DialServeFile(b.Context(), ls.serveFile, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ls.Initialize(b.Context()); err != nil {
		b.Fatal(err)
	}
	return ls
}

// awaitTool waits until the sidecar lists the tool id.
func (ls *listening) awaitTool(b *testing.B, id string) {
	b.Helper()
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		tools, err := ls.Tools(b.Context(), "")
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range tools {
			if t.ID == id {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Fatalf("%s is not listed within %v", id, hangGuard)
}

// stop shuts the sidecar down through its frontend and waits for it.
func (ls *listening) stop(b *testing.B) {
	b.Helper()
	if err := ls.Shutdown(b.Context()); err != nil {
		b.Errorf("shutdown: %v", err)
	}
	ls.Exit(b.Context())
	ls.Close()
	select {
	case <-ls.exited:
	case <-time.After(hangGuard):
		ls.cmd.Process.Kill()
		<-ls.exited
		b.Errorf("freecode-serve did not exit")
	}
}
