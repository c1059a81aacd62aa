package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// requiredClientScenarios reads the client scenarios a revision requires
// from the suite's requirements/<revision>.yaml: the "  - name" lines of
// its top-level client: list.
func requiredClientScenarios(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "client:":
			in = true
		case in && strings.HasPrefix(line, "  - "):
			names = append(names, strings.TrimSpace(strings.TrimPrefix(line, "  - ")))
		case in && line != "" && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "#"):
			in = false
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatalf("%s lists no client scenario", file)
	}
	return names
}

// buildFreecode builds the freecode binary the CLI driver runs.
func buildFreecode(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "freecode")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/freecode/freecode/cmd/freecode")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building freecode: %v\n%s", err, out)
	}
	return bin
}

// TestConformanceRequirements2026 runs every client scenario the
// 2026-07-28 revision requires, at that revision's wire, through the
// freecode binary as a user drives it (cli.go) and through the sidecar as
// a frontend drives it (sidecar.go): each must pass both ways.
func TestConformanceRequirements2026(t *testing.T) {
	dir := os.Getenv("FREECODE_CONFORMANCE_NEXT")
	if dir == "" {
		dir = filepath.Join("..", "conformance-next", "node_modules")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(dir, "@modelcontextprotocol", "conformance")
	suite := filepath.Join(pkg, "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		t.Skip("the MCP conformance suite's prerelease is not installed: run `make conformance-suite`, or set FREECODE_CONFORMANCE_NEXT to a node_modules holding @modelcontextprotocol/conformance@0.2.0-alpha.12")
	}
	node := suiteNode(t)
	scenarios := requiredClientScenarios(t, filepath.Join(pkg, "requirements", "2026-07-28.yaml"))
	freecode := buildFreecode(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var runs []func()
	for _, via := range []string{"cli", "sidecar"} {
		for _, scenario := range scenarios {
			runs = append(runs, func() {
				t.Run(via+"/"+scenario, func(t *testing.T) {
					runRequired(t, node, suite, self, freecode, via, scenario)
				})
			})
		}
	}
	runAtOnce(runs)
}

// scenariosAtOnce is how many scenarios run at a time: each mostly waits
// (on Node, on a freecode process starting), so more than -parallel's
// GOMAXPROCS, for the package to fit go test's default timeout.
const scenariosAtOnce = 6

// runAtOnce runs each of runs (t.Run calls, which may run at once),
// scenariosAtOnce at a time, and returns when all have.
func runAtOnce(runs []func()) {
	sem := make(chan struct{}, scenariosAtOnce)
	var wg sync.WaitGroup
	for _, run := range runs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			run()
		})
	}
	wg.Wait()
}

// runRequired runs one scenario through the driver via.
func runRequired(t *testing.T, node, suite, self, freecode, via, scenario string) {
	// A hang guard only: a scenario takes a few seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, suite, "client", "--command", self, "--scenario", scenario, "--spec-version", "2026-07-28")
	cmd.Dir = t.TempDir()
	log := filepath.Join(cmd.Dir, "client.log")
	cmd.Env = append(os.Environ(), asClientEnv+"=1", "NO_COLOR=1", viaEnv+"="+via, cliBinEnv+"="+freecode, logEnv+"="+log)
	out, err := cmd.CombinedOutput()
	m := passedRe.FindSubmatch(out)
	if m == nil {
		t.Fatalf("no result line (%v):\n%s", err, out)
	}
	if err != nil || string(m[3]) != "0" || string(m[1]) != string(m[2]) {
		said, _ := os.ReadFile(log)
		t.Errorf("%s (%v):\n%s\nthe driver and freecode said:\n%s", m[0], err, out, said)
	}
}
