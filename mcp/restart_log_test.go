package mcp

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/freecode/freecode/internal/mcptest"
)

// A restart the user asked for is told as that, at info, and is not a
// retry: before, the server's log said "restarting" and then, as a
// warning, "retrying 1/6". One that fails is retried as a lost connection
// is, from the first of the six.
func TestRestartAskedIsInfo(t *testing.T) {
	var logs logLines
	c := newTestConnOpts(t, testSrv(t, "a"), nil, &ConnOptions{Environ: testEnviron, OnLog: logs.add})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c.Reconnect(t.Context()); err != nil {
		t.Fatalf("Reconnect: %v", err)
	}
	lines := logs.get()
	if !slices.Contains(lines, "info restarting: asked by the user") {
		t.Errorf("no restart at info in the log:\n%s", strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "info ") {
			t.Errorf("a restart that went well logged %q:\n%s", l, strings.Join(lines, "\n"))
		}
	}

	// Started once, then exits at every start.
	var failing logLines
	rec := mcptest.NewRecorder()
	c = newTestConnOpts(t, testSrv(t, "gone", "crashafter="+filepath.Join(t.TempDir(), "starts")+":1"), rec, &ConnOptions{Environ: testEnviron, OnLog: failing.add})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c.Reconnect(t.Context()); !errors.Is(err, ErrRetrying) && !errors.Is(err, ErrNotConnected) {
		t.Errorf("Reconnect of a server that exits at start = %v", err)
	}
	rec.MustAwait(t, mcptest.ReachedState("gone", StateFailed))
	lines = failing.get()
	i := slices.Index(lines, "info restarting: asked by the user")
	var retries []string
	for _, l := range lines[i+1:] {
		if strings.HasPrefix(l, "warning retrying ") {
			retries = append(retries, l)
		}
	}
	if i < 0 || len(retries) == 0 || !strings.HasPrefix(retries[0], "warning retrying 1/6 ") {
		t.Errorf("the log of a restart that fails:\n%s", strings.Join(lines, "\n"))
	}
}
