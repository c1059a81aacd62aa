package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/freecode/freecode/mcp"
)

// benchFleet returns the config of twelve npm servers, four instances
// each of server-everything, server-filesystem and server-memory, as
// `npx -y …` entries run them (by node, from interop/: no download),
// each started as start says.
func benchFleet(b *testing.B, npm, dir, start string) map[string]any {
	var servers []map[string]any
	for i := range 4 {
		files := filepath.Join(dir, fmt.Sprintf("files%d", i))
		if err := os.MkdirAll(files, 0o700); err != nil {
			b.Fatal(err)
		}
		mem := npmServer(npm, fmt.Sprintf("memory%d", i), "server-memory")
		mem["env"] = map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, fmt.Sprintf("memory%d.json", i))}
		servers = append(servers,
			npmServer(npm, fmt.Sprintf("everything%d", i), "server-everything", "stdio"),
			npmServer(npm, fmt.Sprintf("fs%d", i), "server-filesystem", files),
			mem)
	}
	for _, s := range servers {
		s["start"] = start
	}
	return mcpSection(servers, nil)
}

// treeRSS returns the resident memory of this process and every process
// below it, in bytes, from /proc.
func treeRSS(b *testing.B) int64 {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		b.Skip("no /proc to measure memory in")
	}
	parent := map[int]int{}
	rss := map[int]int64{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(data)) {
			f := strings.Fields(line)
			switch {
			case len(f) >= 2 && f[0] == "PPid:":
				parent[pid], _ = strconv.Atoi(f[1])
			case len(f) >= 2 && f[0] == "VmRSS:":
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				rss[pid] = kb << 10
			}
		}
	}
	var total int64
	for pid := range rss {
		for p := pid; p > 0; p = parent[p] {
			if p == os.Getpid() {
				total += rss[pid]
				break
			}
		}
	}
	return total
}

// BenchmarkStartToReady measures, in one run, a workspace's start to
// ready (every server connected, or idle with its tools registered) with
// twelve npm servers all eager and all on demand (from manifests a first
// run wrote), and the resident memory of the process tree when ready.
// Reported: ms and MB of each, and on-demand as a share of eager.
func BenchmarkStartToReady(b *testing.B) {
	npm := npmDir(b)
	type side struct {
		name      string
		env       *env
		took, rss []float64
	}
	sides := []*side{{name: "eager"}, {name: "onDemand"}}
	for _, s := range sides {
		s.env = newEnv(b)
		writeJSON(b, s.env.cfgPath, benchFleet(b, npm, s.env.dir, s.name))
	}
	// The first run of the on-demand fleet learns the tools and writes
	// the manifests; it is what every later start is spared.
	w := sides[1].env.open(b)
	if err := w.WaitSettled(b.Context()); err != nil {
		b.Fatal(err)
	}
	w.Close()
	ready := func(w *Workspace) {
		if err := w.WaitSettled(b.Context()); err != nil {
			b.Fatal(err)
		}
		for _, st := range w.Statuses() {
			if st.State != mcp.StateConnected && st.State != mcp.StateIdle || st.ToolCount == 0 {
				b.Fatalf("%s not ready: %+v", st.Name, st)
			}
		}
	}
	for b.Loop() {
		for _, s := range sides {
			start := time.Now()
			w := s.env.openWith(b, nil)
			ready(w)
			s.took = append(s.took, ms(time.Since(start)))
			s.rss = append(s.rss, float64(treeRSS(b))/(1<<20))
			w.Close()
		}
	}
	median := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	eagerMs, odMs := median(sides[0].took), median(sides[1].took)
	eagerMB, odMB := median(sides[0].rss), median(sides[1].rss)
	b.ReportMetric(eagerMs, "eager-ms")
	b.ReportMetric(odMs, "ondemand-ms")
	b.ReportMetric(100*odMs/eagerMs, "ondemand-%time")
	b.ReportMetric(eagerMB, "eager-MB")
	b.ReportMetric(odMB, "ondemand-MB")
	b.ReportMetric(100*odMB/eagerMB, "ondemand-%mem")
}

// BenchmarkFirstCall measures, in one run, a call to server-everything's
// echo that has to start the server (idle, registered from its manifest)
// and the same call to a server already running. Reported: the median ms
// of each and their ratio.
func BenchmarkFirstCall(b *testing.B) {
	npm := npmDir(b)
	e := newEnv(b)
	cold := npmServer(npm, "cold", "server-everything", "stdio")
	cold["idleTimeout"] = 1 // idles out right after each call
	warm := npmServer(npm, "warm", "server-everything", "stdio")
	warm["start"] = "eager"
	writeJSON(b, e.cfgPath, mcpSection([]map[string]any{cold, warm}, nil))
	w := e.open(b)
	sub := w.Subscribe(nil)
	defer sub.Close()
	settle(b, w)
	await(b, sub, "cold idle", statusIs("cold", "idle"))
	echo := func(server string) time.Duration {
		start := time.Now()
		if r := call(b, w, "mcp__"+server+"__echo", `{"message":"hi"}`, nil); r.IsError {
			b.Fatalf("%s: %s", server, r.Text())
		}
		return time.Since(start)
	}
	for range 20 {
		echo("warm") // the JIT and the pipes warmed up
	}
	var first, again []float64
	for b.Loop() {
		first = append(first, ms(echo("cold")))
		await(b, sub, "cold idle again", statusIs("cold", "idle"))
		again = append(again, ms(echo("warm")))
	}
	slices.Sort(first)
	slices.Sort(again)
	f, a := first[len(first)/2], again[len(again)/2]
	b.ReportMetric(f, "first-call-ms")
	b.ReportMetric(a, "warm-call-ms")
	b.ReportMetric(f/a, "first/warm")
}
