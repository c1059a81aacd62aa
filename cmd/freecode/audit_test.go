package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/freecode/freecode/internal/audit"
)

// auditHome gives the test a home of its own, and returns its audit
// trail's directory.
func auditHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("FREECODE_CONFIG", "")
	return filepath.Join(home, ".freecode", "audit")
}

func recordAudit(t *testing.T, dir string, events ...audit.Event) {
	t.Helper()
	l, err := audit.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, e := range events {
		if err := l.Record(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
}

var auditEvents = []audit.Event{
	{Kind: audit.KindCall, Frontend: "vscode", Tool: "github__create_issue", Server: "github",
		Decision: audit.DecisionAllowed, Rule: "mcp__github", RuleFile: "/p/.freecode/settings.json",
		Outcome: audit.OutcomeOK, DurationMs: 120},
	{Kind: audit.KindTrust, File: "/p", By: "freecode trust", Detail: "trusted"},
	{Kind: audit.KindCall, Frontend: "gateway:claude", Tool: "evil\x1b[2Jtool", Server: "evil",
		Decision: audit.DecisionAsked, Answer: audit.AnswerDeny, Outcome: audit.OutcomeDenied},
}

func TestAuditPrint(t *testing.T) {
	dir := auditHome(t)
	recordAudit(t, dir, auditEvents...)

	out := mustRun(t, "audit")
	ls := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(ls) != 3 {
		t.Fatalf("audit printed %d lines:\n%s", len(ls), out)
	}
	for i, want := range []string{
		"  call  vscode  github__create_issue  allowed by mcp__github in /p/.freecode/settings.json  ok  120ms",
		"  trust  /p  by freecode trust  trusted",
		`  call  gateway:claude  evil\x1b[2Jtool  asked, answered deny  denied  0ms`,
	} {
		if !strings.HasSuffix(ls[i], want) {
			t.Errorf("line %d: %q, want it to end in %q", i+1, ls[i], want)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Error("a tool name's escape sequence reached the terminal")
	}

	if out := mustRun(t, "audit", "--server", "github"); strings.Count(out, "\n") != 1 || !strings.Contains(out, "github__create_issue") {
		t.Errorf("--server github printed:\n%s", out)
	}
	if out := mustRun(t, "audit", "--since", "1h"); strings.Count(out, "\n") != 3 {
		t.Errorf("--since 1h printed:\n%s", out)
	}
	if out := mustRun(t, "audit", "--since", "2999-01-01T00:00:00Z"); out != "" {
		t.Errorf("--since a time to come printed:\n%s", out)
	}
	if _, errOut, code := run(t, "audit", "--since", "yesterday"); code != 1 || !strings.Contains(errOut, "--since") {
		t.Errorf("--since yesterday: exit %d, %s", code, errOut)
	}

	raw, err := os.ReadFile(filepath.Join(dir, audit.CurrentFile))
	if err != nil {
		t.Fatal(err)
	}
	out = mustRun(t, "audit", "--json")
	if out != string(raw) {
		t.Errorf("--json printed:\n%s\nthe file holds:\n%s", out, raw)
	}
	for l := range strings.Lines(out) {
		if !json.Valid([]byte(l)) {
			t.Errorf("--json printed a line that is not JSON: %s", l)
		}
	}
}

func TestAuditVerify(t *testing.T) {
	dir := auditHome(t)
	if _, errOut, code := run(t, "audit", "verify"); code != 1 || !strings.Contains(errOut, "no audit trail") {
		t.Errorf("verify without a trail: exit %d, %s", code, errOut)
	}
	recordAudit(t, dir, auditEvents...)
	if out := mustRun(t, "audit", "verify"); out != "verified 3 lines in 1 file\n" {
		t.Errorf("verify printed %q", out)
	}

	path := filepath.Join(dir, audit.CurrentFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ls := bytes.SplitAfter(b, []byte("\n"))
	if err := os.WriteFile(path, bytes.Join([][]byte{ls[0], ls[2]}, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, code := run(t, "audit", "verify")
	if code != 1 || !strings.Contains(out, path+":2: seq 2 missing") || !strings.Contains(out, "1 problem in 2 lines of 1 file") {
		t.Errorf("verify of a trail with a line deleted: exit %d\n%s", code, out)
	}
}

// lockedBuffer is a bytes.Buffer the command writes while the test reads;
// wrote has a value after each write.
type lockedBuffer struct {
	wrote chan struct{}
	mu    sync.Mutex
	b     bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case b.wrote <- struct{}{}:
	default:
	}
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestAuditFollow(t *testing.T) {
	defer func(d time.Duration) { audit.FollowEvery = d }(audit.FollowEvery)
	audit.FollowEvery = 5 * time.Millisecond
	dir := auditHome(t)
	recordAudit(t, dir, auditEvents[0])

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &lockedBuffer{wrote: make(chan struct{}, 1)}
	cmd := newRootCmd()
	cmd.SetOut(out)
	cmd.SetErr(out)
	cmd.SetArgs([]string{"audit", "--follow", "--server", "github"})
	done := make(chan error)
	go func() { done <- cmd.ExecuteContext(ctx) }()

	recordAudit(t, dir, auditEvents[1], auditEvents[2], auditEvents[0])
	timeout := time.After(10 * time.Second)
	for strings.Count(out.String(), "github__create_issue") < 2 {
		select {
		case <-out.wrote:
		case err := <-done:
			t.Fatalf("audit --follow returned %v; printed:\n%s", err, out.String())
		case <-timeout:
			t.Fatalf("the line recorded never came; printed:\n%s", out.String())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("audit --follow after Ctrl-C: %v", err)
	}
	if got := out.String(); strings.Count(got, "\n") != 2 || strings.Contains(got, "trust") {
		t.Errorf("audit --follow --server github printed:\n%s", got)
	}
}
