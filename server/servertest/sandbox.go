package servertest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
)

// Sandbox is a test's files: the sidecar's home, its config, a project.
type Sandbox struct {
	Home       string // $HOME of the sidecar, in this process or the binary
	ConfigDir  string // Home/.freecode: config.json and the user's settings.json
	ConfigPath string // ConfigDir/config.json
	Project    string // the project, the first workspace folder
	ServeFile  string // ConfigDir/serve.json
}

// Path returns the path of a sandbox file named as in Run's archive:
// "project/…" is in the project, anything else in ConfigDir.
func (s *Sandbox) Path(name string) string {
	if rest, ok := strings.CutPrefix(name, "project/"); ok {
		return filepath.Join(s.Project, filepath.FromSlash(rest))
	}
	return filepath.Join(s.ConfigDir, filepath.FromSlash(name))
}

// WriteFile writes a sandbox file, as an editor saving it does.
func (s *Sandbox) WriteFile(t testing.TB, name, content string) {
	t.Helper()
	path := s.Path(name)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Expand expands the templates of a file's content:
//
//	{{server "name"}}           the config entry of the test MCP server (Server) named name
//	{{server "name" "K" "V"…}}  the same with env K=V…
//	{{demo "name"}}             the config entry of examples/demo-server, built for the test
func Expand(t *testing.T, content string) string {
	t.Helper()
	tmpl, err := template.New("file").Funcs(template.FuncMap{
		"server": func(name string, env ...string) string {
			e := map[string]string{}
			for i := 0; i+1 < len(env); i += 2 {
				e[env[i]] = env[i+1]
			}
			return Server(name, map[string]any{"env": e})
		},
		"demo": func(name string) string {
			b, err := json.Marshal(map[string]any{"name": name, "type": "local", "command": []string{binary(t, "demo-server")}})
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		},
	}).Parse(content)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, nil); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// NPMDir returns $FREECODE_NPM, where `make npm` installs the npm MCP
// servers the interop tests run. Without it the test is skipped, but
// under CI, where it must run.
func NPMDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("FREECODE_NPM")
	if dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("FREECODE_NPM is not set (CI=true): run `make npm` and export FREECODE_NPM")
		}
		t.Skip("FREECODE_NPM not set; run through `make test` for the npm interop tests")
	}
	return dir
}
