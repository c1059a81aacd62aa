// Command conformance-client is the client the MCP conformance suite's
// client scenarios run (`conformance client --command "conformance-client"`,
// which appends the scenario server's URL): FreeCode's own mcp.Conn and
// sign-in against the suite's test servers. It is a test harness, built for
// the conformance run only and never shipped: `make build` leaves it out,
// and its test runs the suite with the test binary itself as the client.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/tokenstore"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/mcp/oauth"
)

// clientMetadataURL is the client id the suite expects from a client that
// uses a Client ID Metadata Document.
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

// scenarioWait bounds one scenario: the suite's servers answer at once.
const scenarioWait = 2 * time.Minute

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: conformance-client <server url>")
		os.Exit(2)
	}
	os.Exit(dispatch(os.Args[1]))
}

// dispatch runs the program as the browser of a CLI sign-in, as the CLI
// driver, or as the library driver, and returns its exit status.
func dispatch(arg string) int {
	var err error
	switch {
	case os.Getenv(browserEnv) == "1":
		err = browse(arg)
	case os.Getenv(viaEnv) == "cli":
		ctx, cancel := context.WithTimeout(context.Background(), scenarioWait)
		defer cancel()
		err = runCLI(ctx, arg, os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Stderr)
	case os.Getenv(viaEnv) == "sidecar":
		ctx, cancel := context.WithTimeout(context.Background(), scenarioWait)
		defer cancel()
		err = runSidecar(ctx, arg, os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Stderr)
	default:
		err = run(arg, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance-client:", err)
		return 1
	}
	return 0
}

// run signs in (the suite's authorization servers redirect back at once,
// so a browser that follows redirects is all the user there is), lists
// the tools and calls test-tool when there is one. MCP_CONFORMANCE_CONTEXT
// may hold a pre-registered client_id and client_secret.
func run(serverURL string, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), scenarioWait)
	defer cancel()
	suite, err := readSuiteContext()
	if err != nil {
		return err
	}
	signIn := &config.OAuth{ClientMetadataURL: clientMetadataURL}
	if suite.ClientID != "" {
		signIn = &config.OAuth{ClientID: suite.ClientID, ClientSecret: suite.ClientSecret}
	}
	srv := config.Server{
		Name: "conformance", Type: config.TypeRemote, Enabled: true,
		URL: serverURL, Transport: config.TransportHTTP, OAuth: signIn, Timeout: 30 * time.Second,
	}.WithDefaults()

	// The scenario's tokens are its own, gone with it: never the user's.
	dir, err := os.MkdirTemp("", "freecode-conformance")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	browser := &http.Client{Transport: &http.Transport{}}
	defer browser.CloseIdleConnections()
	open := func(ctx context.Context, u string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		resp, err := browser.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	conn := mcp.NewConn(srv, &mcp.ConnOptions{
		Logger:  slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug})),
		NoRetry: true,
		Auth:    &oauth.Options{Tokens: tokenstore.Open(dir, nil), OpenURL: open},
	})
	defer conn.Close()
	if err = conn.Login(ctx, open); err != nil {
		return err
	}
	if slices.ContainsFunc(conn.Tools(), func(t *mcpsdk.Tool) bool { return t.Name == "test-tool" }) {
		if _, err := conn.CallTool(ctx, "test-tool", map[string]any{}, nil); err != nil {
			return err
		}
	}
	return nil
}
