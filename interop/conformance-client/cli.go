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

	"github.com/freecode/freecode/internal/browserfile"
)

// The CLI driver: the scenario driven through the freecode binary alone,
// as a user would drive it (`freecode mcp add … --transport http`, `mcp
// login`, `mcp tools`, `tools call`), in a HOME and config of its own. The
// browser the sign-in opens is this program again (browserEnv): it loads
// the sign-in URL and follows the redirects back to the CLI's loopback
// callback, as a user who consents at once.

// viaEnv picks the driver: "cli" runs the freecode binary named by
// cliBinEnv, "sidecar" its sidecar (sidecar.go); anything else uses the
// mcp package directly (run).
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
// the redirects, to the CLI's callback in the end. As $BROWSER it is given
// the file: URL of a page that sends it on to the sign-in page
// (oauth.OpenBrowser), which it follows first.
func browse(arg string) error {
	u, err := browserfile.Follow(arg)
	if err != nil {
		return err
	}
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
	c, sc, done, err := prepare(ctx, serverURL, scenario, stderr, "freecode-conformance-cli")
	if err != nil {
		return err
	}
	defer done()
	if isAuth(scenario) {
		if _, err := c.run(ctx, "mcp", "login", serverName); err != nil {
			return err
		}
	}
	return play(ctx, c, scenario, sc)
}

// prepare makes a config in a directory of its own (named after prefix)
// holding the scenario's server, for a driver; done removes it and closes
// the log that stderr now goes to as well.
func prepare(ctx context.Context, serverURL, scenario string, stderr io.Writer, prefix string) (_ *cli, _ suiteContext, done func(), err error) {
	sc, err := readSuiteContext()
	if err != nil {
		return nil, sc, nil, err
	}
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, sc, nil, err
	}
	stderr, closeLog, err := withLog(stderr)
	if err != nil {
		os.RemoveAll(dir)
		return nil, sc, nil, err
	}
	done = func() { closeLog(); os.RemoveAll(dir) }
	c, err := newCLI(dir, stderr)
	if err == nil {
		err = c.add(ctx, serverURL, scenario, sc)
	}
	if err != nil {
		done()
		return nil, sc, nil, err
	}
	return c, sc, done, nil
}

// add adds the scenario's server, as `freecode mcp add` does: over
// Streamable HTTP, signing in with the suite's client when it names one,
// else with the Client ID Metadata Document the suite expects.
func (c *cli) add(ctx context.Context, serverURL, scenario string, sc suiteContext) error {
	add := []string{"mcp", "add", serverName, "remote", serverURL, "--transport", "http", "--timeout", "30s"}
	switch {
	case sc.ClientID != "":
		add = append(add, "--client-id", sc.ClientID, "--client-secret", sc.ClientSecret)
	case isAuth(scenario):
		add = append(add, "--client-metadata-url", clientMetadataURL)
	}
	_, err := c.run(ctx, add...)
	return err
}

func (c *cli) resources(ctx context.Context) ([]string, error) {
	out, err := c.run(ctx, "mcp", "resources", serverName, "--json")
	if err != nil {
		return nil, err
	}
	var rs []struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(out, &rs); err != nil {
		return nil, fmt.Errorf("mcp resources --json: %w", err)
	}
	uris := make([]string, len(rs))
	for i, r := range rs {
		uris[i] = r.URI
	}
	return uris, nil
}

func (c *cli) read(ctx context.Context, uri string) error {
	_, err := c.run(ctx, "mcp", "resources", serverName, "--read", uri)
	return err
}

func (c *cli) prompts(ctx context.Context) ([]string, error) {
	out, err := c.run(ctx, "mcp", "prompts", serverName, "--json")
	if err != nil {
		return nil, err
	}
	var ps []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(out, &ps); err != nil {
		return nil, fmt.Errorf("mcp prompts --json: %w", err)
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return names, nil
}

func (c *cli) prompt(ctx context.Context, name string) error {
	_, err := c.run(ctx, "mcp", "prompts", serverName, "--get", name)
	return err
}
