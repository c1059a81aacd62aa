package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/freecode/freecode/config"
)

// The approval's text and the sandbox's command line are made from one
// Policy: for entries with env, cwd, symbolic links and sandbox keys,
// every path Describe names is the one bubblewrap binds, resolved, and
// nothing the entry's env says moves either.
func TestDescribeAndBwrapAgree(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	project := filepath.Join(root, "project")
	real := filepath.Join(root, "elsewhere")
	for _, d := range []string{home + "/.ssh", home + "/.config/gh", project + "/.git/hooks", project + "/.vscode", real, root + "/notes"} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{home + "/.npmrc", home + "/.git-credentials", project + "/.git/config", home + "/secret.txt"} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A cwd that is a link to another directory, and a link to the home.
	if err := os.Symlink(real, filepath.Join(project, "data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home, filepath.Join(root, "home-link")); err != nil {
		t.Fatal(err)
	}
	h := Host{Homes: []string{home}, NPMCache: filepath.Join(home, ".npm")}
	for name, srv := range map[string]config.Server{
		"default":      {Cwd: project},
		"env":          {Cwd: project, Env: map[string]string{"HOME": "/nonexistent", "npm_config_cache": "/"}},
		"env in cwd":   {Cwd: project, Env: map[string]string{"npm_config_cache": project + "/.cache/npm"}},
		"symlink cwd":  {Cwd: filepath.Join(project, "data")},
		"sandbox keys": {Cwd: project, Sandbox: &config.Sandbox{AllowWrite: []string{root + "/notes", root + "/home-link"}, DenyRead: []string{home + "/secret.txt"}, Network: config.NetworkAll}},
		"domains":      {Cwd: project, Sandbox: &config.Sandbox{Network: config.NetworkDomains, AllowedDomains: []string{"api.example.com"}}},
	} {
		t.Run(name, func(t *testing.T) {
			srv.Type, srv.Scope, srv.Command = config.TypeLocal, config.ScopeProject, []string{"node", "server.js"}
			p, err := PolicyOf(srv, h)
			if err != nil {
				t.Fatal(err)
			}
			desc := DescribeServer(srv, h)
			if desc != p.Describe() {
				t.Fatalf("DescribeServer:\n%s\nPolicy.Describe:\n%s", desc, p.Describe())
			}
			a := bwrapArgs(p, held{protected: p.Protected, masked: make([]string, len(p.Masked))}, srv.Command, "/bin/freecode", "", false)
			rw, ro, hidden := mounts(a)
			// A sealed directory's entries are bound writable one by one.
			rw = slices.DeleteFunc(rw, func(d string) bool { return slices.Contains(p.Sealed, filepath.Dir(d)) })
			// What it writes: the same set in both.
			want := append([]string{p.Cwd}, p.Writable...)
			if !sameSet(rw, want) {
				t.Errorf("bwrap binds writable %v, the policy says %v", rw, want)
			}
			for _, w := range want {
				if !strings.Contains(desc, p.tilde(w)) {
					t.Errorf("the description does not name writable %s: %s", w, desc)
				}
				if r, _ := config.ResolvePath(w); r != w {
					t.Errorf("writable %s is not resolved (%s)", w, r)
				}
			}
			for _, d := range slices.Concat(p.DenyRead, p.Masked) {
				if !slices.Contains(hidden, d) {
					t.Errorf("%s is hidden by the policy, not by bwrap: %v", d, a)
				}
				if !strings.Contains(desc, p.tilde(d)) {
					t.Errorf("the description does not name hidden %s", d)
				}
			}
			for _, pr := range p.Protected {
				if !slices.Contains(ro, pr) {
					t.Errorf("protected %s is not bound read-only", pr)
				}
			}
			if p.Network == config.NetworkAll != slices.Contains(a, "--share-net") {
				t.Errorf("network %s, args %v", p.Network, a)
			}
			// Nothing of the entry's env moved the policy.
			if slices.Contains(rw, "/") || !slices.Contains(p.DenyRead, filepath.Join(home, ".ssh")) {
				t.Errorf("writable %v, hidden %v", rw, p.DenyRead)
			}
		})
	}
	// The symbolic links: the cwd is bound where it leads, and a writable
	// link to the home makes the home's secrets no less hidden.
	p, _ := PolicyOf(config.Server{Type: config.TypeLocal, Cwd: filepath.Join(project, "data")}, h)
	if p.Cwd != real {
		t.Errorf("cwd %s, want %s", p.Cwd, real)
	}
	p, _ = PolicyOf(config.Server{Type: config.TypeLocal, Cwd: project, Sandbox: &config.Sandbox{AllowWrite: []string{root + "/home-link"}}}, h)
	if !slices.Contains(p.Writable, home) || !slices.Contains(p.Protected, home+"/.bashrc") || !slices.Contains(p.DenyRead, home+"/.ssh") {
		t.Errorf("a writable home through a link: %+v", p)
	}
}

// mounts are the destinations bubblewrap's args bind writable, bind
// read-only (but the root), and hide.
func mounts(a []string) (rw, ro, hidden []string) {
	for i := 0; i < len(a); i++ {
		switch a[i] {
		case "--bind":
			rw = append(rw, a[i+2])
			i += 2
		case "--ro-bind":
			if a[i+1] == "/dev/null" || strings.Contains(a[i+1], "masked") || a[i+1] == "" {
				hidden = append(hidden, a[i+2])
			} else if a[i+2] != "/" {
				ro = append(ro, a[i+2])
			}
			i += 2
		case "--tmpfs":
			hidden = append(hidden, a[i+1])
			i++
		}
	}
	return rw, ro, hidden
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// A placeholder is held by every sandbox that binds it and removed when the
// last lets go, unless someone wrote into it meanwhile: removing it while
// another sandbox has it bound would lift that one's protection.
func TestPlaceholdersCounted(t *testing.T) {
	cwd := t.TempDir()
	p, err := Resolve(config.Sandbox{}, Host{}, cwd, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	bind1, release1, err := holdProtected(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".vscode", ".mcp.json", ".npmrc", ".freecode"} {
		if !slices.Contains(bind1, filepath.Join(cwd, name)) {
			t.Errorf("%s is not bound: %v", name, bind1)
		}
		if _, err := os.Lstat(filepath.Join(cwd, name)); err != nil {
			t.Errorf("no placeholder for %s: %v", name, err)
		}
	}
	if slices.Contains(bind1, filepath.Join(cwd, ".git/hooks")) {
		t.Error(".git/hooks is held though there is no .git")
	}
	_, release2, err := holdProtected(p)
	if err != nil {
		t.Fatal(err)
	}
	release1()
	if _, err := os.Lstat(filepath.Join(cwd, ".mcp.json")); err != nil {
		t.Errorf("the first release removed a placeholder the second sandbox holds: %v", err)
	}
	// Someone outside writes into one: it is theirs now.
	if err := os.WriteFile(filepath.Join(cwd, ".vscode", "settings.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	release2()
	for name, want := range map[string]bool{".mcp.json": false, ".npmrc": false, ".freecode": false, ".vscode": true} {
		if _, err := os.Lstat(filepath.Join(cwd, name)); (err == nil) != want {
			t.Errorf("after the last release, %s exists: %v, want %v", name, err == nil, want)
		}
	}
}
