package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/freecode/freecode/mcpserve"
)

// Flags that would serve more widely than asked are refused before
// anything starts.
func TestServeFlags(t *testing.T) {
	cfgPath, project := serveConfig(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--stdio", "--http", "127.0.0.1:0"}, "choose one"},
		{[]string{"--no-auth"}, "go with --http"},
		{[]string{"--http", "127.0.0.1:0", "--no-auth", "--allow-remote"}, "loopback addresses only"},
		{[]string{"--http", "0.0.0.0:0"}, "not a loopback address"},
		{[]string{"--http", "192.0.2.1:0", "--no-auth"}, "not a loopback address"},
		{[]string{"--http", "example.com:80", "--allow-remote"}, "must be an IP address or localhost"},
	}
	for _, tc := range tests {
		args := append([]string{"--config", cfgPath, "mcp", "serve", "--project", project}, tc.args...)
		_, errOut, code := run(t, args...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("serve %v: exit %d, %q; want an error containing %q", tc.args, code, errOut, tc.want)
		}
	}
}

// The token is kept, 0600 in the user's 0700 ~/.freecode/auth and nowhere
// near the config file or the project, across restarts, until --new-token.
// It is printed when it is made, never again: a later start says where it is.
func TestServeTokenKept(t *testing.T) {
	cfgPath, project := serveConfig(t)
	first := startHTTPServe(t, cfgPath, project)
	file := filepath.Join(os.Getenv("HOME"), ".freecode", "auth", mcpserve.ServeFileName)
	if runtime.GOOS != "windows" {
		for p, want := range map[string]os.FileMode{file: 0o600, filepath.Dir(file): 0o700} {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
				t.Errorf("%s: %v, %v; want mode %v", p, fi, err, want)
			}
		}
	}
	noSecretUnder(t, first.token, filepath.Dir(cfgPath), project)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var sf mcpserve.ServeFile
	if err := json.Unmarshal(data, &sf); err != nil || sf.URL != first.url || sf.Token != first.token {
		t.Errorf("%s holds %s (%v), want the URL %s and the printed token", file, data, err, first.url)
	}
	first.cmd.Process.Signal(os.Interrupt)
	first.cmd.Wait()

	// A server without a token leaves the kept one for the next.
	noAuth := startHTTPServe(t, cfgPath, project, "--no-auth")
	noAuth.cmd.Process.Signal(os.Interrupt)
	noAuth.cmd.Wait()

	second := startHTTPServe(t, cfgPath, project)
	if second.token != first.token {
		t.Errorf("a restart made a new token")
	}
	if errText := second.stderrText(); strings.Contains(errText, first.token) || !strings.Contains(errText, "token kept in "+file) {
		t.Errorf("a restart's stderr:\n%s\nwant where the token is kept, not the token", errText)
	}
	if !strings.Contains(first.stderrText(), "new token "+first.token) {
		t.Errorf("the first start's stderr:\n%s\nwant the new token", first.stderrText())
	}
	second.cmd.Process.Signal(os.Interrupt)
	second.cmd.Wait()

	third := startHTTPServe(t, cfgPath, project, "--new-token")
	if third.token == first.token || third.token == "" || !strings.Contains(third.stderrText(), "new token "+third.token) {
		t.Errorf("--new-token kept the token, or did not print the new one:\n%s", third.stderrText())
	}
	noSecretUnder(t, third.token, filepath.Dir(cfgPath), project)
}

// noSecretUnder fails the test if a file under one of dirs holds secret.
func noSecretUnder(t *testing.T, secret string, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if strings.Contains(string(data), secret) {
				t.Errorf("%s holds a secret: it belongs in the user's ~/.freecode/auth", path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
