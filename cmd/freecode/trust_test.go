package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/permissions"
)

func TestTrust(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // trusting records the rules accepted there
	home := t.TempDir()
	cfgPath := filepath.Join(home, "config.json")
	orig := "// mine\n{\n  \"provider\": {\"anthropic\": {\"apiKey\": \"sk-1\"}},\n}\n"
	if err := os.WriteFile(cfgPath, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	proj := t.TempDir()

	out, errOut, code := run(t, "--config", cfgPath, "trust", proj)
	if code != 0 {
		t.Fatalf("trust: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "Trusting") {
		t.Errorf("trust printed %q", out)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.IsTrusted(proj) {
		t.Fatalf("project not trusted after `freecode trust`; config:\n%s", readFile(t, cfgPath))
	}
	data := readFile(t, cfgPath)
	if !strings.Contains(data, "// mine") || !strings.Contains(data, `"apiKey": "sk-1"`) {
		t.Errorf("trust lost other content:\n%s", data)
	}

	if _, errOut, code := run(t, "--config", cfgPath, "trust", "--revoke", proj); code != 0 {
		t.Fatalf("trust --revoke: exit %d: %s", code, errOut)
	}
	cfg, err = config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.IsTrusted(proj) {
		t.Fatal("project still trusted after --revoke")
	}

	if _, _, code := run(t, "--config", cfgPath, "trust", filepath.Join(proj, "missing")); code == 0 {
		t.Error("trusting a missing directory succeeded")
	}
}

// The report of issue 29 through the CLI: in a trusted project, another
// hand (here the test, for a pull or a server that may write the project)
// writes allow mcp__* into settings.local.json. The demo server's
// destructive tool is still refused, the warning says why and what to run;
// `freecode trust` prints what it accepts, and then the tool runs. Revoking
// forgets what was accepted.
func TestTrustAcceptsChanges(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	args, _ := toolsConfig(t)
	cfgPath, proj := args[1], args[4]
	local := filepath.Join(proj, ".freecode", "settings.local.json")
	if err := os.MkdirAll(filepath.Dir(local), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(local, []byte(`{"permissions": {"deny": ["mcp__demo__create_issue"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "--config", cfgPath, "trust", proj)
	if !strings.Contains(out, "Trusting") || strings.Contains(out, "Accepted") {
		t.Errorf("first trust of a project without allow rules printed:\n%s", out)
	}
	del := append(args, "call", "mcp__demo__delete_file", "--args", `{"path":"README.md"}`)
	out, errOut, code := run(t, del...)
	if code != 1 || !strings.Contains(out+errOut, "no one to ask") {
		t.Fatalf("delete_file with no rule allowing it: exit %d\n%s%s", code, out, errOut)
	}

	if err := os.WriteFile(local, []byte(`{"permissions": {"allow": ["mcp__*"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = run(t, del...)
	if code != 1 || !strings.Contains(out+errOut, "no one to ask") {
		t.Errorf("delete_file after another hand allowed mcp__*: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{`ignored allow rule "mcp__*": added since you accepted`, "run `freecode trust`", `"mcp__demo__create_issue", which you accepted, is no longer in the file`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the refused call's warnings lack %q:\n%s", want, errOut)
		}
	}

	out = mustRun(t, "--config", cfgPath, "trust", proj)
	want := "Accepted what its rule files loosened since you last accepted them:\n  " + local + "\n    + allow mcp__*\n    - deny  mcp__demo__create_issue (no longer enforced)\n"
	if !strings.Contains(out, want) {
		t.Errorf("trust printed:\n%s\nwant it to hold:\n%s", out, want)
	}
	out, errOut, code = run(t, del...)
	if code != 0 || !strings.Contains(out, "deleted README.md") || errOut != "" {
		t.Errorf("delete_file once the rules are accepted: exit %d\n%s%s", code, out, errOut)
	}
	if out := mustRun(t, "--config", cfgPath, "trust", proj); !strings.Contains(out, "nothing new was accepted") {
		t.Errorf("trusting again with nothing new printed:\n%s", out)
	}

	mustRun(t, "--config", cfgPath, "trust", "--revoke", proj)
	if acc, err := permissions.ReadAccepted(proj); acc != nil || err != nil {
		t.Errorf("the record after --revoke: %+v, %v", acc, err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
