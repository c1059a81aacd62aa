package main

import (
	"context"
	"io"
	"os"
	"strings"
)

// A driver is FreeCode as the suite's scenarios exercise it, through one
// way in: the CLI (cli.go) or the sidecar's frontend protocol (sidecar.go).
// Each method acts on the one server the driver added.
type driver interface {
	tools(ctx context.Context) ([]string, error)
	// call calls a tool; a result that is an error is the scenario's
	// business, not the driver's.
	call(ctx context.Context, tool string, args map[string]any) error
	resources(ctx context.Context) ([]string, error)
	read(ctx context.Context, uri string) error
	prompts(ctx context.Context) ([]string, error)
	prompt(ctx context.Context, name string) error
}

func isAuth(scenario string) bool { return strings.HasPrefix(scenario, "auth/") }

// play does what scenario asks of a client once it is connected (and
// signed in): list the tools, then call the ones the scenario's checks
// watch, as the go-sdk's and the TypeScript SDK's conformance clients do.
func play(ctx context.Context, d driver, scenario string, sc suiteContext) error {
	tools, err := d.tools(ctx)
	if err != nil {
		return err
	}
	switch scenario {
	case "tools_call":
		return d.call(ctx, "add_numbers", map[string]any{"a": 5, "b": 3})
	case "elicitation-sep1034-client-defaults":
		return d.call(ctx, "test_client_elicitation_defaults", nil)
	case "sse-retry":
		return d.call(ctx, "test_reconnection", nil)
	case "sep-2322-client-request-state":
		for _, t := range tools {
			d.call(ctx, t, nil) // some are refused by design
		}
	case "http-standard-headers":
		// One request of each kind that names something: the referee
		// checks their Mcp-Method and Mcp-Name headers.
		if len(tools) > 0 {
			d.call(ctx, tools[0], nil)
		}
		if uris, err := d.resources(ctx); err == nil && len(uris) > 0 {
			d.read(ctx, uris[0])
		}
		if names, err := d.prompts(ctx); err == nil && len(names) > 0 {
			d.prompt(ctx, names[0])
		}
	case "http-custom-headers":
		for _, tc := range sc.ToolCalls {
			d.call(ctx, tc.Name, tc.Arguments)
		}
	case "http-invalid-tool-headers":
		// What FreeCode lists is what survived; each is called.
		for _, t := range tools {
			d.call(ctx, t, map[string]any{"region": "us-west1"})
		}
	default:
		for _, t := range tools {
			if t == "test-tool" {
				return d.call(ctx, t, nil)
			}
		}
	}
	return nil
}

// withLog returns stderr, and the file logEnv names beside it if set: the
// suite shows none of what the client says.
func withLog(stderr io.Writer) (io.Writer, func(), error) {
	path := os.Getenv(logEnv)
	if path == "" {
		return stderr, func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, nil, err
	}
	return io.MultiWriter(stderr, f), func() { f.Close() }, nil
}
