package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/server/servertest"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

func TestMain(m *testing.M) { servertest.Main(m) }

// demoConfig writes a config holding the demo server as "demo" and
// returns its path and a project directory.
func demoConfig(t *testing.T) (cfg, project string) {
	t.Helper()
	demoBin := servertest.BinaryPath(t, "demo-server")
	dir := t.TempDir()
	cfg, project = filepath.Join(dir, "config.json"), filepath.Join(dir, "project")
	if err := os.Mkdir(project, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := config.AddServer(cfg, config.Server{Name: "demo", Type: config.TypeLocal, Enabled: true, Command: []string{demoBin}}.WithDefaults()); err != nil {
		t.Fatal(err)
	}
	return cfg, project
}

// checkSession checks that out shows every step of the script, with what
// the sidecar really answered.
func checkSession(t *testing.T, out string) {
	t.Helper()
	for _, re := range []string{
		`(?m)^← serverInfo freecode-serve \S+, frontend protocol 1$`,
		`(?m)^← freecode/servers/status  demo: connected, 7 tools$`,
		`(?m)^   demo  connected  7      stdio`,
		`(?m)^   mcp__demo__delete_file   D$`,
		`(?m)^   mcp__demo__read_file     R$`,
		`(?m)^← anthropic: 7 tools, hash [0-9a-f]{12}…$`,
		`(?m)^← c1  allowed:\n     module example.com/greeter$`,
		`(?m)^← c2  allowed:\n     internal/greet/greet.go:5: func Hello\(name string\) string \{$`,
		`(?m)^← freecode/permission/request  c4: mcp__demo__delete_file \{"path":"docs/notes.md"\}\n     reason: no rule; tool is not read-only \(projectTrusted: false\)\n→ answer  allowOnce$`,
		`(?m)^← freecode/permission/request  c5: mcp__demo__delete_file \{"path":"README.md"\}\n.*\n→ answer  deny$`,
		`(?m)^← c4  asked:\n     deleted docs/notes.md$`,
		`(?m)^← c5  denied, error:\n     mcp__demo__delete_file was denied by the user$`,
		`(?m)^← freecode/servers/status  demo2: connected, 7 tools, serverInfo freecode-demo2$`,
		`(?m)^← anthropic: 14 tools, hash [0-9a-f]{12}…: the one the notification named$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("the session's output does not match %s", re)
		}
	}
	// The hash the tools/changed named is the one the definitions have
	// now, and not the one before the edit.
	before := regexp.MustCompile(`(?m)^← anthropic: 7 tools, hash (\S+)$`).FindStringSubmatch(out)
	changed := regexp.MustCompile(`(?m)^     anthropic (\S+), openai`).FindStringSubmatch(out)
	after := regexp.MustCompile(`(?m)^← anthropic: 14 tools, hash (\S+): `).FindStringSubmatch(out)
	if before == nil || changed == nil || after == nil || changed[1] != after[1] || before[1] == after[1] {
		t.Errorf("hashes: before the edit %q, notified %q, after %q", before, changed, after)
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

// The session over stdio, as an editor runs the sidecar: every step, the
// config edited, and the sidecar shut down at the end.
func TestSessionStdio(t *testing.T) {
	cfg, project := demoConfig(t)
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"--sidecar", servertest.BinaryPath(t, "freecode-serve"), "--config", cfg, "--project", project}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s\nstdout:\n%s", code, errOut.String(), out.String())
	}
	checkSession(t, out.String())
	if !strings.Contains(out.String(), "\n→ shutdown\n→ exit\n") {
		t.Errorf("the session did not shut its sidecar down:\n%s", out.String())
	}
	c, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := c.Server("demo2"); !ok || !slices.Equal(s.Command, []string{servertest.BinaryPath(t, "demo-server"), "--name", "freecode-demo2"}) {
		t.Errorf("the config's demo2 = %+v, %v", s, ok)
	}
	if errOut.Len() > 0 {
		t.Errorf("stderr:\n%s", errOut.String())
	}
}

// Joining a sidecar that listens: the same session, and the sidecar left
// running.
func TestSessionConnect(t *testing.T) {
	cfg, project := demoConfig(t)
	home := t.TempDir()
	sockDir, err := os.MkdirTemp("", "fc")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	cmd := exec.Command(servertest.BinaryPath(t, "freecode-serve"), "--listen", "unix:"+filepath.Join(sockDir, "s"), "--config", cfg, "--project", project)
	cmd.Env = append(os.Environ(), "HOME="+home)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan struct{})
	var log bytes.Buffer
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "msg=listening") || strings.HasPrefix(sc.Text(), "INFO listening ") { // text or plain log lines
				close(listening)
			}
		}
		cmd.Wait()
	}()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	}()
	select {
	case <-listening:
	case <-exited:
		t.Fatalf("the sidecar exited:\n%s", log.String())
	case <-time.After(waitGuard):
		t.Fatal("the sidecar did not listen")
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*waitGuard) // a hang guard
	defer cancel()
	var out, errOut bytes.Buffer
	args := []string{"--connect", "--serve-file", filepath.Join(home, ".freecode", "serve.json")}
	if code := run(ctx, args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s\nstdout:\n%s", code, errOut.String(), out.String())
	}
	checkSession(t, out.String())
	if strings.Contains(out.String(), "shutdown") {
		t.Errorf("a session that joined a sidecar shut it down:\n%s", out.String())
	}
	select {
	case <-exited:
		t.Errorf("the sidecar exited after the session:\n%s", log.String())
	default:
	}
}

// A config without the demo server is an error that says what to add.
func TestSessionNoDemo(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(`{"mcp": {"servers": []}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"--sidecar", servertest.BinaryPath(t, "freecode-serve"), "--config", cfg, "--project", dir}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), `the config has no local server "demo"`) {
		t.Errorf("exit %d\nstderr:\n%s", code, errOut.String())
	}
}
