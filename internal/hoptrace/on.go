//go:build hoptrace

package hoptrace

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"
)

// Enabled says whether the build times the stages (the tag hoptrace).
const Enabled = true

var (
	mu     sync.Mutex
	marks  = map[string]time.Time{}
	stages = map[string][]time.Duration{}
)

// Mark starts the stages timed from point.
func Mark(point string) {
	now := time.Now()
	mu.Lock()
	marks[point] = now
	mu.Unlock()
}

// Stage records the time since point as the stage named name; nothing if
// point was never marked.
func Stage(point, name string) {
	now := time.Now()
	mu.Lock()
	if t, ok := marks[point]; ok {
		stages[name] = append(stages[name], now.Sub(t))
	}
	mu.Unlock()
}

// Take is Stage, and forgets point: the stage is recorded once per Mark.
func Take(point, name string) {
	Stage(point, name)
	mu.Lock()
	delete(marks, point)
	mu.Unlock()
}

// Report writes each stage's p50 and p90 to stderr, in the order of
// their names, leaving out the first quarter of its samples (the warm-up).
func Report() { report(os.Stderr) }

func report(w io.Writer) {
	mu.Lock()
	defer mu.Unlock()
	names := make([]string, 0, len(stages))
	for k := range stages {
		names = append(names, k)
	}
	slices.Sort(names)
	fmt.Fprintf(w, "hoptrace (pid %d): stage, samples, p50, p90\n", os.Getpid())
	for _, k := range names {
		ds := stages[k]
		ds = slices.Clone(ds[len(ds)/4:])
		if len(ds) == 0 {
			continue
		}
		slices.Sort(ds)
		fmt.Fprintf(w, "hoptrace  %-48s %7d %10v %10v\n", k, len(ds), ds[len(ds)/2], ds[len(ds)*9/10])
	}
}
