//go:build unix

package main

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/proctest"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

// runWeb runs the freecode binary's `web` with HOME set, as a user does:
// the sidecar it starts is a process of its own, which outlives it.
func runWeb(t *testing.T, e *liveEnv, env []string, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(freecodeBin, append([]string{"--config", e.cfg, "web", "--project", e.project}, args...)...)
	cmd.Env = append(os.Environ(), append([]string{"HOME=" + e.home}, env...)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("freecode web %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String(), errOut.String()
}

var signInURL = regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?code=[0-9a-f]+`)

// `freecode web` starts a sidecar listening on ws: for the project when
// none runs, and prints a one-time link with --no-browser; a browser that
// opens it is signed in and its tab sees the servers. Run again, it
// reuses that sidecar with a new code (the first one spent), and opens
// $BROWSER on the sign-in file that posts it.
func TestWeb(t *testing.T) {
	e := newLiveEnv(t)
	serveFile := filepath.Join(e.home, ".freecode", "serve.json")
	out, errOut := runWeb(t, e, nil, "--no-browser")
	sf, err := protocol.ReadServeFile(serveFile)
	if err != nil {
		t.Fatalf("no serve.json after freecode web: %v\n%s", err, errOut)
	}
	t.Cleanup(func() { stopSidecar(t, serveFile, sf.PID) })
	if !strings.HasPrefix(sf.Address, "ws://127.0.0.1:") || !strings.Contains(errOut, "Started a sidecar") {
		t.Fatalf("serve.json names %s; stderr:\n%s", sf.Address, errOut)
	}
	first := signInURL.FindString(out)
	if first == "" || !strings.HasPrefix(first, "http://"+strings.TrimPrefix(sf.Address, "ws://")+"/") {
		t.Fatalf("no sign-in link for %s in:\n%s", sf.Address, out)
	}
	cookie, err := servertest.SignIn(t.Context(), first)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("Origin", "http://"+strings.TrimPrefix(sf.Address, "ws://"))
	h.Set("Cookie", cookie.Name+"="+cookie.Value)
	connected := make(chan struct{}, 1)
	tab, err := frontend.DialWebSocket(t.Context(), sf.Address+"/rpc", h, &frontend.Options{ClientName: "tab", OnNotification: func(n frontend.Notification) {
		var st protocol.ServerStatus
		if n.Method == protocol.NotifyServersStatus && n.Decode(&st) == nil && st.Name == "demo" && st.State == protocol.StateConnected {
			select {
			case connected <- struct{}{}:
			default:
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	if _, err := tab.Initialize(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-connected:
	case <-time.After(hangGuard):
		t.Fatal("the tab never saw demo connected")
	}

	// Again, with a browser: the same sidecar, a new code, in a file.
	opened := filepath.Join(t.TempDir(), "opened")
	browser := filepath.Join(t.TempDir(), "browser")
	if err := os.WriteFile(browser, []byte("#!/bin/sh\necho \"$1\" >"+opened+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	out, errOut = runWeb(t, e, []string{"BROWSER=" + browser})
	if strings.Contains(errOut, "Started") || !strings.Contains(out, "Opened the FreeCode MCP page") {
		t.Errorf("the second run did not reuse the sidecar:\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	if again, _ := protocol.ReadServeFile(serveFile); again.PID != sf.PID {
		t.Errorf("serve.json names pid %d, want the first sidecar's %d", again.PID, sf.PID)
	}
	b, err := os.ReadFile(opened)
	if err != nil {
		t.Fatal(err)
	}
	file, action, code := readSignInFile(t, strings.TrimSpace(string(b)))
	if action != "http://"+strings.TrimPrefix(sf.Address, "ws://")+"/signin" || strings.Contains(first, code) {
		t.Errorf("the sign-in file posts to %s; want this sidecar's /signin, with a new code", action)
	}
	if _, err := servertest.SignIn(t.Context(), first); err == nil {
		t.Error("the first link signed in twice")
	}
	if c := signInPOST(t, action, code); c == nil {
		t.Error("the sign-in file's code did not sign in")
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the sign-in file is still there once its code was spent: %v", err)
	}
}

// readSignInFile reads the sign-in file `freecode web` gave $BROWSER by
// its file: URL, as the browser does, and returns its path and its form:
// where it posts, and the code.
func readSignInFile(t *testing.T, fileURL string) (path, action, code string) {
	t.Helper()
	u, err := url.Parse(fileURL)
	if err != nil || u.Scheme != "file" {
		t.Fatalf("$BROWSER was given %q, want a file: URL", fileURL)
	}
	body, err := os.ReadFile(u.Path)
	if err != nil {
		t.Fatal(err)
	}
	a := regexp.MustCompile(`<form method="post" action="([^"]+)"`).FindSubmatch(body)
	c := regexp.MustCompile(`<input type="hidden" name="code" value="([^"]+)">`).FindSubmatch(body)
	if a == nil || c == nil {
		t.Fatalf("%s is not a form that posts a code:\n%s", u.Path, body)
	}
	return u.Path, string(a[1]), string(c[1])
}

// signInPOST posts code to a sign-in form's action as a browser does;
// the session cookie it set, nil if none.
func signInPOST(t *testing.T, action, code string) *http.Cookie {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, action, strings.NewReader(url.Values{"code": {code}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "null") // a file: page's
	resp, err := servertest.NoRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		return nil
	}
	for _, c := range resp.Cookies() {
		return c
	}
	return nil
}

// A sidecar on a unix socket is not replaced, nor used: a browser cannot
// reach it, and it is other frontends' too.
func TestWebSidecarOnSocket(t *testing.T) {
	e := newLiveEnv(t)
	e.startSidecar(t)
	stdout, stderr, code := e.run(t, "web", "--no-browser", "--project", e.project)
	if code != 1 || !strings.Contains(stderr, "which a browser cannot reach") || signInURL.MatchString(stdout) {
		t.Errorf("freecode web with a sidecar on a socket: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// stopSidecar sends the sidecar serveFile names shutdown and exit, and
// waits for its process to go (a child of the freecode web that started
// it, which has exited).
func stopSidecar(t *testing.T, serveFile string, pid int) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	c, err := frontend.DialServeFile(ctx, serveFile, nil)
	if err == nil {
		if _, err = c.Initialize(ctx); err == nil {
			c.Shutdown(ctx)
			c.Exit(ctx)
		}
		c.Close()
	}
	if err != nil {
		t.Errorf("stopping the sidecar: %v; killing it", err)
		syscall.Kill(pid, syscall.SIGKILL)
	}
	for deadline := time.Now().Add(hangGuard); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		// An in-process command that ran servers made this process a
		// child subreaper: the orphaned sidecar is then its child, a
		// zombie until reaped here.
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if syscall.Kill(pid, 0) != nil {
			return
		}
	}
	proctest.WantGone(t, pid, "after shutdown")
}
