package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The sandbox as an ordinary user would meet it: a user made for the test,
// whose home the user database names, runs `freecode tools call` with a
// $HOME of FreeCode's elsewhere, against a sandboxed server whose entry
// sets HOME and npm_config_cache of its own. The secrets in the home the
// user database names stay hidden and its start-up files unwritten, and
// the server's answer is checked on the host. It needs root to make the
// user, and bubblewrap.
func TestSandboxAsOrdinaryUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a user for the test needs root")
	}
	for _, prog := range []string{"bwrap", "useradd", "userdel"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s is not installed", prog)
		}
	}
	// Not under /tmp: the sandbox has a /tmp of its own, where a secret
	// would be hidden whatever the policy said.
	base, err := os.MkdirTemp("/var/tmp", "freecode-user-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "bin")
	if out, err := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "../../internal/mcptest/cmd/attack-server").CombinedOutput(); err != nil {
		t.Fatalf("building attack-server: %v\n%s", err, out)
	}
	// The freecode built for the tests sits in a directory only root
	// enters: a copy the user can run.
	copyFile(t, freecodeBin, filepath.Join(bin, "freecode"), 0o755)

	name := fmt.Sprintf("fctest%d", os.Getpid()%100000)
	home := filepath.Join(base, "home")
	if out, err := exec.Command("useradd", "-d", home, "-m", "-s", "/bin/sh", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("userdel", name).Run() })
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)

	// FreeCode's own $HOME is not the one the user database names.
	fcHome, project := filepath.Join(base, "fchome"), filepath.Join(base, "project")
	entry := map[string]any{"mcp": map[string]any{"servers": []any{map[string]any{
		"name": "hostile", "command": []string{filepath.Join(bin, "attack-server")}, "cwd": project,
		"env":     map[string]string{"HOME": "/nonexistent", "npm_config_cache": "/"},
		"sandbox": map[string]any{"network": "none"},
	}}}}
	cfg, _ := json.Marshal(entry)
	files := map[string]string{
		filepath.Join(home, ".ssh", "id_rsa"):             "SECRET-KEY",
		filepath.Join(home, ".git-credentials"):           "https://u:SECRET-GIT@example.com",
		filepath.Join(home, ".bashrc"):                    "original\n",
		filepath.Join(home, "notes.txt"):                  "readable",
		filepath.Join(fcHome, ".freecode", "config.json"): string(cfg),
		filepath.Join(project, "README"):                  "a project",
	}
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{home, fcHome, project} {
		if err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, uid, gid)
		}); err != nil {
			t.Fatal(err)
		}
	}

	attack := func(op, path string) string {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"op": op, "path": path, "data": "echo owned\n"})
		cmd := exec.Command(filepath.Join(bin, "freecode"), "tools", "call", "mcp__hostile__attack", "--args", string(args), "--yes")
		cmd.Dir = project
		cmd.Env = []string{"HOME=" + fcHome, "PATH=/usr/local/bin:/usr/bin:/bin", "USER=" + name, "LOGNAME=" + name}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		out, err := cmd.CombinedOutput()
		if err != nil && !strings.Contains(string(out), "refused") {
			t.Fatalf("freecode tools call as %s: %v\n%s", name, err, out)
		}
		return string(out)
	}
	if got := attack("read", filepath.Join(home, "notes.txt")); !strings.Contains(got, "ok: readable") {
		t.Fatalf("read ~/notes.txt as %s: %s (the home must be there to be hidden in)", name, got)
	}
	for _, f := range []string{".ssh/id_rsa", ".git-credentials"} {
		if got := attack("read", filepath.Join(home, f)); strings.Contains(got, "SECRET") {
			t.Errorf("read ~/%s as %s: %s", f, name, got)
		}
	}
	attack("write", filepath.Join(home, ".bashrc"))
	if b, _ := os.ReadFile(filepath.Join(home, ".bashrc")); string(b) != "original\n" {
		t.Errorf("~/.bashrc of %s is now %q", name, b)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
