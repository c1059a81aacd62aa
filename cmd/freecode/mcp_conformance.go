package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/tokenstore"
	"github.com/freecode/freecode/mcp"
)

// conformanceClientMetadataURL is the client id the MCP conformance suite
// expects from a client that uses a Client ID Metadata Document.
const conformanceClientMetadataURL = "https://conformance-test.local/client-metadata.json"

// newMCPConformanceClientCmd is the client the MCP conformance suite's
// client scenarios run (`conformance client --command "freecode mcp
// conformance-client"`): FreeCode's own Conn and sign-in against the
// suite's test servers. Hidden: it is a test harness, not a user command.
func newMCPConformanceClientCmd(*app) *cobra.Command {
	return &cobra.Command{
		Use:    "conformance-client <url>",
		Short:  "Run an MCP conformance suite client scenario against url",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
			defer cancel()
			return runConformanceClient(ctx, args[0], cmd.ErrOrStderr())
		},
	}
}

// runConformanceClient signs in (the suite's authorization servers
// redirect back at once, so a browser that follows redirects is all the
// user there is), lists the tools and calls test-tool when there is one.
// MCP_CONFORMANCE_CONTEXT may hold a pre-registered client_id and
// client_secret.
func runConformanceClient(ctx context.Context, serverURL string, stderr io.Writer) error {
	var suite struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &suite); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	oauth := &config.OAuth{ClientMetadataURL: conformanceClientMetadataURL}
	if suite.ClientID != "" {
		oauth = &config.OAuth{ClientID: suite.ClientID, ClientSecret: suite.ClientSecret}
	}
	srv := config.Server{
		Name: "conformance", Type: config.TypeRemote, Enabled: true,
		URL: serverURL, Transport: config.TransportHTTP, OAuth: oauth, Timeout: 30 * time.Second,
	}.WithDefaults()

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
		Auth:    &mcp.AuthOptions{Tokens: tokenstore.Open(dir, nil), OpenURL: open},
	})
	defer conn.Close()
	if err := conn.Login(ctx, open); err != nil {
		return err
	}
	if slices.ContainsFunc(conn.Tools(), func(t *mcpsdk.Tool) bool { return t.Name == "test-tool" }) {
		if _, err := conn.CallTool(ctx, "test-tool", map[string]any{}, nil); err != nil {
			return err
		}
	}
	return nil
}
