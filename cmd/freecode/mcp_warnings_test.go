package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A key FreeCode ignores is said by every command that reads the config,
// once, on stderr, where it is: before, `mcp list` showed a server
// "disabled": true (Claude's spelling) as enabled and `mcp start` ran it,
// with no word of the key or of "timout".
func TestConfigWarningsPrinted(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // no sidecar: mcp start connects from here
	path := filepath.Join(t.TempDir(), "config.json")
	data := "{\n  \"mcp\": {\n    \"servers\": [\n      {\"name\": \"demo\", \"command\": [\"" + filepath.ToSlash(demoServer) + "\"],\n       \"disabled\": true, \"timout\": 100}\n    ]\n  }\n}\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	warnings := []string{
		"warning: " + path + `:5:8: mcp.servers[0].disabled: server "demo": unknown key "disabled" is ignored: FreeCode's is "enabled": false` + "\n",
		"warning: " + path + `:5:26: mcp.servers[0].timout: server "demo": unknown key "timout" is ignored; did you mean "timeout"?` + "\n",
	}
	for _, args := range [][]string{
		{"mcp", "list"},
		{"mcp", "start", "demo"},
		{"tools", "list", "--project", t.TempDir()},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, errOut, code := run(t, append([]string{"--config", path}, args...)...)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			for _, w := range warnings {
				if n := strings.Count(errOut, w); n != 1 {
					t.Errorf("stderr has %q %d times, want once:\n%s", w, n, errOut)
				}
			}
			if strings.Contains(out, "warning") || strings.Contains(out, "timout") {
				t.Errorf("stdout has the warnings:\n%s", out)
			}
		})
	}
}
