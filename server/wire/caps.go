package wire

import (
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/workspace"
)

// ResourceInfo is a resource as freecode/resources lists it.
func ResourceInfo(r workspace.ResourceInfo) protocol.ResourceInfo {
	return protocol.ResourceInfo{Server: r.Server, URI: r.URI, Name: r.Name, Title: r.Title, MIMEType: r.MIMEType, Description: r.Description}
}

// PromptInfo is a prompt as freecode/prompts lists it.
func PromptInfo(p workspace.PromptInfo) protocol.PromptInfo {
	out := protocol.PromptInfo{Server: p.Server, Name: p.Name, Title: p.Title, Description: p.Description}
	for _, a := range p.Arguments {
		if a != nil {
			out.Arguments = append(out.Arguments, promptArgument(a))
		}
	}
	return out
}

func promptArgument(a *mcpsdk.PromptArgument) protocol.PromptArgument {
	return protocol.PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required}
}
