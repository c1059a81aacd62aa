package servertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcptest"
)

// The test server's tools that ask the client (elicitation, sampling), and
// its resources and prompts. The tools ask the newest protocol's way, an
// input request in the result; for a 2025-11-25 session the go-sdk server
// sends the request of its own instead, as older servers do.

// askSchema is the form the elicit tool asks for: a required name and a
// count whose default 3 fills an answer that leaves it out.
var askSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":  map[string]any{"type": "string", "title": "Name"},
		"count": map[string]any{"type": "integer", "default": 3},
	},
	"required": []string{"name"},
}

// addAskTools adds to server:
//
//	elicit      read-only: asks a form (askSchema) with the message "who are
//	            you?"; returns "<action> <content as JSON>"
//	elicit_url  read-only: asks the user to open its url argument; returns
//	            the action
//	sample      read-only: asks for a completion of its text argument, with
//	            a system prompt and maxTokens 50; returns "<model>: <text>"
//	caps        read-only: returns the client capabilities the server was told
//	            of, as JSON: {"elicitation":…,"sampling":…}, each left out when
//	            not declared
//	addresource adds the resource test://<name> (resources/list_changed follows)
//	addprompt   adds the prompt named by its name argument (prompts/list_changed follows)
//
// and the resource test://hello ("hello from servertest") and the prompt
// greet (argument who, required: "Hello, <who>!").
func addAskTools(server *mcpsdk.Server) {
	obj := map[string]any{"type": "object", "properties": map[string]any{
		"text": map[string]any{"type": "string"},
		"name": map[string]any{"type": "string"},
		"url":  map[string]any{"type": "string"},
	}}
	readOnly := &mcpsdk.ToolAnnotations{ReadOnlyHint: true}
	server.AddTool(&mcpsdk.Tool{Name: "elicit", Description: "Ask the user a form", InputSchema: obj, Annotations: readOnly},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			if r, ok := req.Params.InputResponses["form"].(*mcpsdk.ElicitResult); ok {
				b, _ := json.Marshal(r.Content)
				return mcptest.TextResult(r.Action + " " + string(b)), nil
			}
			return &mcpsdk.CallToolResult{InputRequests: mcpsdk.InputRequestMap{
				"form": &mcpsdk.ElicitParams{Mode: "form", Message: "who are you?", RequestedSchema: askSchema},
			}}, nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "elicit_url", Description: "Ask the user to open a URL", InputSchema: obj, Annotations: readOnly},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			if r, ok := req.Params.InputResponses["url"].(*mcpsdk.ElicitResult); ok {
				return mcptest.TextResult(r.Action), nil
			}
			return &mcpsdk.CallToolResult{InputRequests: mcpsdk.InputRequestMap{
				"url": &mcpsdk.ElicitParams{Mode: "url", Message: "open this page", URL: mcptest.StringArg(req, "url"), ElicitationID: "e1"},
			}}, nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "sample", Description: "Ask the client's model", InputSchema: obj, Annotations: readOnly},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			if r, ok := req.Params.InputResponses["llm"].(*mcpsdk.CreateMessageWithToolsResult); ok {
				var texts []string
				for _, c := range r.Content {
					if tc, ok := c.(*mcpsdk.TextContent); ok {
						texts = append(texts, tc.Text)
					}
				}
				return mcptest.TextResult(r.Model + ": " + strings.Join(texts, " ")), nil
			}
			return &mcpsdk.CallToolResult{InputRequests: mcpsdk.InputRequestMap{
				"llm": &mcpsdk.CreateMessageParams{
					MaxTokens: 50, SystemPrompt: "be brief",
					Messages: []*mcpsdk.SamplingMessage{{Role: "user", Content: &mcpsdk.TextContent{Text: mcptest.StringArg(req, "text")}}},
				},
			}}, nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "caps", Description: "The client's capabilities", InputSchema: obj, Annotations: readOnly},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			var caps mcpsdk.ClientCapabilities
			if ip := req.Session.InitializeParams(); ip != nil && ip.Capabilities != nil {
				caps = *ip.Capabilities
			}
			b, _ := json.Marshal(struct {
				Elicitation *mcpsdk.ElicitationCapabilities `json:"elicitation,omitempty"`
				Sampling    *mcpsdk.SamplingCapabilities    `json:"sampling,omitempty"`
			}{caps.Elicitation, caps.Sampling})
			return mcptest.TextResult(string(b)), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "addresource", Description: "Add a resource", InputSchema: obj},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			name := mcptest.StringArg(req, "name")
			addResource(server, name, "this is "+name)
			return mcptest.TextResult("added " + name), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "addprompt", Description: "Add a prompt", InputSchema: obj},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			name := mcptest.StringArg(req, "name")
			server.AddPrompt(&mcpsdk.Prompt{Name: name, Description: "an added prompt"},
				func(context.Context, *mcpsdk.GetPromptRequest) (*mcpsdk.GetPromptResult, error) {
					return &mcpsdk.GetPromptResult{Messages: []*mcpsdk.PromptMessage{{Role: "user", Content: &mcpsdk.TextContent{Text: name}}}}, nil
				})
			return mcptest.TextResult("added " + name), nil
		})
	addResource(server, "hello", "hello from servertest")
	server.AddPrompt(&mcpsdk.Prompt{Name: "greet", Title: "Greet", Description: "Greet someone",
		Arguments: []*mcpsdk.PromptArgument{{Name: "who", Description: "whom to greet", Required: true}}},
		func(_ context.Context, req *mcpsdk.GetPromptRequest) (*mcpsdk.GetPromptResult, error) {
			who := req.Params.Arguments["who"]
			if who == "" {
				return nil, fmt.Errorf("greet: the argument who is required")
			}
			return &mcpsdk.GetPromptResult{Description: "a greeting", Messages: []*mcpsdk.PromptMessage{
				{Role: "user", Content: &mcpsdk.TextContent{Text: "Hello, " + who + "!"}},
			}}, nil
		})
}

// addResource adds the text resource test://name.
func addResource(server *mcpsdk.Server, name, content string) {
	uri := "test://" + name
	server.AddResource(&mcpsdk.Resource{URI: uri, Name: name, MIMEType: "text/plain", Description: "a test resource"},
		func(context.Context, *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
			fmt.Fprintln(os.Stderr, "read", uri)
			return &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: content}}}, nil
		})
}
