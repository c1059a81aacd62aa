package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/permissions"
)

// parallelProcs is how many freecode processes edit one config file at once.
const parallelProcs = 50

// runProcs runs each argv as its own freecode process, all at once, and
// fails the test for any that did not exit 0 or did not print wantOut.
func runProcs(t *testing.T, wantOut string, argvs [][]string) {
	t.Helper()
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		errs  = make([]string, len(argvs))
	)
	for i, argv := range argvs {
		wg.Go(func() {
			cmd := exec.Command(freecodeBin, argv...)
			<-start // start them together, so that their edits overlap
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), wantOut) {
				errs[i] = fmt.Sprintf("freecode %s: %v\n%s", strings.Join(argv, " "), err, out)
			}
		})
	}
	close(start)
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
}

// serverNames returns the names of the servers in the config file at path.
func serverNames(t *testing.T, path string) []string {
	t.Helper()
	var names []string
	for _, s := range load(t, path).MCP.Servers {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	return names
}

// Fifty `freecode mcp add` processes at once, each adding its own server:
// every one reports success, so every one must be in the file. Each process
// reads the file, adds its entry and replaces the file; without a lock held
// across processes, one that read before another's write undoes that write.
func TestParallelAddKeepsEveryServer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(sharedHead+`"mcp": {}`+sharedTail), 0o600); err != nil {
		t.Fatal(err)
	}
	var argvs [][]string
	var want []string
	for i := range parallelProcs {
		name := fmt.Sprintf("srv%02d", i)
		want = append(want, name)
		argvs = append(argvs, []string{"--config", path, "mcp", "add", name, "local", "--", "true", name})
	}
	runProcs(t, "✓ Added", argvs)
	got := serverNames(t, path)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%d of %d added servers are in the file (-want +got):\n%s", len(got), len(want), d)
	}
	if data := readFile(t, path); !strings.HasPrefix(data, sharedHead) || !strings.HasSuffix(data, sharedTail) {
		t.Errorf("bytes outside mcp changed:\n%s", data)
	}
}

// Fifty `freecode mcp remove` processes at once, each removing its own
// server, leave none behind.
func TestParallelRemoveLeavesNone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	var entries []string
	var argvs [][]string
	for i := range parallelProcs {
		name := fmt.Sprintf("srv%02d", i)
		entries = append(entries, fmt.Sprintf(`{"name": %q, "command": ["true"]}`, name))
		argvs = append(argvs, []string{"--config", path, "mcp", "remove", name})
	}
	data := `{"mcp": {"servers": [` + strings.Join(entries, ",\n") + `, {"name": "keep", "command": ["true"]}]}}`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	runProcs(t, "✓ Removed", argvs)
	if got := serverNames(t, path); !slices.Equal(got, []string{"keep"}) {
		t.Errorf("%d of %d removed servers are still in the file: %v", len(got)-1, parallelProcs, got)
	}
}

// Trust and revoke race across projects: each project sees trust, revoke,
// trust (or trust, revoke) as separate processes, one after another, while
// the other projects' processes write the same file. Each project must end
// in the state its last command reported: a revoke that printed success
// must not be undone by a concurrent trust of another project. Its record
// of accepted rules is there exactly when it is trusted.
func TestParallelTrustRevoke(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // where the processes keep the records
	path := filepath.Join(t.TempDir(), "config.json")
	const projects = parallelProcs / 2
	dirs := make([]string, projects)
	for i := range dirs {
		dirs[i] = t.TempDir()
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []string
	)
	start := make(chan struct{})
	for i, dir := range dirs {
		ops := [][]string{{"trust", dir}, {"trust", "--revoke", dir}}
		if i%2 == 0 {
			ops = append(ops, []string{"trust", dir})
		}
		wg.Go(func() {
			<-start
			for _, op := range ops {
				out, err := exec.Command(freecodeBin, append([]string{"--config", path}, op...)...).CombinedOutput()
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Sprintf("freecode %s: %v\n%s", strings.Join(op, " "), err, out))
					mu.Unlock()
				}
			}
		})
	}
	close(start)
	wg.Wait()
	for _, e := range errs {
		t.Error(e)
	}
	cfg := load(t, path)
	var wrong []string
	for i, dir := range dirs {
		if want := i%2 == 0; cfg.IsTrusted(dir) != want {
			wrong = append(wrong, fmt.Sprintf("project %d: trusted %v, want %v", i, !want, want))
		}
		if acc, err := permissions.ReadAccepted(dir); err != nil || (acc != nil) != (i%2 == 0) {
			wrong = append(wrong, fmt.Sprintf("project %d: record of accepted rules %+v, %v", i, acc, err))
		}
	}
	if len(wrong) > 0 {
		t.Errorf("%d of %d projects are not in the state of their last command:\n%s", len(wrong), projects, strings.Join(wrong, "\n"))
	}
}
