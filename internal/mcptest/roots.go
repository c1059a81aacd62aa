package mcptest

import (
	"context"
	"fmt"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// RootsHandler is a tool handler that asks the client for its roots and
// answers with their URIs, one per line. It asks as a result
// (inputRequests, which the client answers and retries the call with), the
// one way a server may ask while it serves a call under 2026-07-28; under
// 2025-11-25 the go-sdk asks roots/list for it. A client that said at
// initialize that it has no roots capability is an error.
func RootsHandler(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
	if ip := req.Session.InitializeParams(); ip != nil && (ip.Capabilities == nil || ip.Capabilities.RootsV2 == nil) {
		return nil, fmt.Errorf("the client has no roots capability")
	}
	resp, ok := req.Params.InputResponses["roots"].(*mcpsdk.ListRootsResult)
	if !ok {
		return &mcpsdk.CallToolResult{InputRequests: mcpsdk.InputRequestMap{"roots": &mcpsdk.ListRootsParams{}}}, nil
	}
	var uris []string
	for _, r := range resp.Roots {
		uris = append(uris, r.URI)
	}
	return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: strings.Join(uris, "\n")}}}, nil
}
