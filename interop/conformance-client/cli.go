package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The CLI driver: the scenario driven through the freecode binary alone,
// as a user would drive it (`freecode mcp add … --transport http`, `mcp
// login`, `mcp tools`, `tools call`), in a HOME and config of its own. The
// browser the sign-in opens is this program again (browserEnv): it loads
// the sign-in URL and follows the redirects back to the CLI's loopback
// callback, as a user who consents at once.

// viaEnv picks the driver: "cli" runs the freecode binary named by
// cliBinEnv; anything else uses the mcp package directly (run).
const (
	viaEnv     = "FREECODE_CONFORMANCE_VIA"
	cliBinEnv  = "FREECODE_CONFORMANCE_FREECODE"
	browserEnv = "FREECODE_CONFORMANCE_BROWSER"
	// logEnv may name a file the CLI driver appends what it ran and what
	// freecode printed to.
	logEnv = "FREECODE_CONFORMANCE_LOG"
)

// serverName is the entry the CLI driver adds.
const serverName = "conformance"

// suiteContext is MCP_CONFORMANCE_CONTEXT: what some scenarios hand the
// client.
type suiteContext struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	ToolCalls    []struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"toolCalls"`
}

func readSuiteContext() (suiteContext, error) {
	var sc suiteContext
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &sc); err != nil {
			return sc, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	return sc, nil
}

// browse is this program as the user's browser: it loads u and follows
// the redirects, to the CLI's callback in the end.
func browse(u string) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s ended on %s: %s", u, resp.Status, body)
	}
	return nil
}

// cli runs freecode commands against one config in a HOME of its own.
type cli struct {
	bin, config string
	env         []string
	stderr      io.Writer
}

func newCLI(dir string, stderr io.Writer) (*cli, error) {
	bin := os.Getenv(cliBinEnv)
	if bin == "" {
		return nil, fmt.Errorf("%s names no freecode binary", cliBinEnv)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	env := []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "BROWSER=" + self, browserEnv + "=1", "NO_COLOR=1"}
	return &cli{bin: bin, config: filepath.Join(dir, "config.json"), env: env, stderr: stderr}, nil
}

// run runs `freecode --config … args…` and returns its standard output.
func (c *cli) run(ctx context.Context, args ...string) ([]byte, error) {
	return c.runAt(ctx, false, args...)
}

// runAt is run, on a terminal of its own if atTerminal, where a user
// answers what freecode asks.
func (c *cli) runAt(ctx context.Context, atTerminal bool, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.bin, append([]string{"--config", c.config}, args...)...)
	cmd.Env = c.env
	cmd.Dir = filepath.Dir(c.config)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = c.stderr
	if atTerminal {
		typist, term, err := openPTY()
		if err != nil {
			return nil, err
		}
		defer typist.Close()
		defer term.Close()
		go io.Copy(io.Discard, typist) // nothing is echoed; whatever else comes
		cmd.Stdin = term
		cmd.Stderr = &user{out: c.stderr, typed: typist}
	}
	fmt.Fprintf(c.stderr, "$ freecode %s\n", strings.Join(args, " "))
	err := cmd.Run()
	c.stderr.Write(out.Bytes())
	if err != nil {
		return out.Bytes(), fmt.Errorf("freecode %s: %w", strings.Join(args, " "), err)
	}
	return out.Bytes(), nil
}

// tools returns the names of the entry's tools (`freecode mcp tools --json`).
func (c *cli) tools(ctx context.Context) ([]string, error) {
	out, err := c.run(ctx, "mcp", "tools", serverName, "--json")
	if err != nil {
		return nil, err
	}
	var tools []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(out, &tools); err != nil {
		return nil, fmt.Errorf("mcp tools --json: %w", err)
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names, nil
}

// call runs `freecode tools call` on a terminal, a user at it; a tool result that is an error (exit
// status 1) is the scenario's business, not the driver's.
func (c *cli) call(ctx context.Context, tool string, args map[string]any) error {
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	_, err = c.runAt(ctx, true, "tools", "call", "mcp__"+serverName+"__"+tool, "--args", string(b), "--yes", "--json")
	return err
}

// runCLI drives scenario against serverURL through the freecode binary.
func runCLI(ctx context.Context, serverURL, scenario string, stderr io.Writer) error {
	sc, err := readSuiteContext()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "freecode-conformance-cli")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if path := os.Getenv(logEnv); path != "" {
		// The suite shows none of what the client says: keep it.
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		stderr = io.MultiWriter(stderr, f)
	}
	c, err := newCLI(dir, stderr)
	if err != nil {
		return err
	}
	add := []string{"mcp", "add", serverName, "remote", serverURL, "--transport", "http", "--timeout", "30s"}
	auth := strings.HasPrefix(scenario, "auth/")
	switch {
	case sc.ClientID != "":
		add = append(add, "--client-id", sc.ClientID, "--client-secret", sc.ClientSecret)
	case auth:
		add = append(add, "--client-metadata-url", clientMetadataURL)
	}
	if _, err := c.run(ctx, add...); err != nil {
		return err
	}
	if auth {
		if _, err := c.run(ctx, "mcp", "login", serverName); err != nil {
			return err
		}
	}
	tools, err := c.tools(ctx)
	if err != nil {
		return err
	}
	switch scenario {
	case "tools_call":
		return c.call(ctx, "add_numbers", map[string]any{"a": 5, "b": 3})
	case "elicitation-sep1034-client-defaults":
		return c.call(ctx, "test_client_elicitation_defaults", nil)
	case "sse-retry":
		return c.call(ctx, "test_reconnection", nil)
	case "sep-2322-client-request-state":
		for _, t := range tools {
			c.call(ctx, t, nil) // some are refused by design
		}
	case "http-standard-headers":
		if len(tools) > 0 {
			c.call(ctx, tools[0], nil)
		}
		if out, err := c.run(ctx, "mcp", "resources", serverName, "--json"); err == nil {
			var rs []struct {
				URI string `json:"uri"`
			}
			if json.Unmarshal(out, &rs) == nil && len(rs) > 0 {
				c.run(ctx, "mcp", "resources", serverName, "--read", rs[0].URI)
			}
		}
		if out, err := c.run(ctx, "mcp", "prompts", serverName, "--json"); err == nil {
			var ps []struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(out, &ps) == nil && len(ps) > 0 {
				c.run(ctx, "mcp", "prompts", serverName, "--get", ps[0].Name)
			}
		}
	case "http-custom-headers":
		for _, tc := range sc.ToolCalls {
			c.call(ctx, tc.Name, tc.Arguments)
		}
	case "http-invalid-tool-headers":
		for _, t := range tools {
			c.call(ctx, t, map[string]any{"region": "us-west1"})
		}
	default:
		for _, t := range tools {
			if t == "test-tool" {
				return c.call(ctx, t, nil)
			}
		}
	}
	return nil
}
