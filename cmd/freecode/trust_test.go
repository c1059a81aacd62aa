package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freecode/freecode/config"
)

func TestTrust(t *testing.T) {
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

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
