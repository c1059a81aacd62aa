package wire

import (
	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/internal/registry"
	"github.com/freecode/freecode/internal/registry/install"
)

// RegistryEntry is a server of the MCP Registry's index as
// freecode/registry/search answers it (and `freecode mcp search --json`
// prints it).
func RegistryEntry(e registry.Entry) protocol.RegistryEntry {
	runs := e.Runs
	if runs == nil {
		runs = []string{}
	}
	return protocol.RegistryEntry{Name: e.Name, Title: e.Title, Description: e.Description, Version: e.Version, Status: e.Status, Runs: runs}
}

// RegistryValue is a value an install from the registry asks for.
func RegistryValue(v install.Value) protocol.RegistryValue {
	return protocol.RegistryValue{Name: v.Name, Description: v.Description, Secret: v.Secret, Default: v.Default, Choices: v.Choices}
}

// RegistryIdentity is an entry's registry block; nil for none.
func RegistryIdentity(r *config.Registry) *protocol.RegistryIdentity {
	if r == nil {
		return nil
	}
	return &protocol.RegistryIdentity{Name: r.Name, Version: r.Version, URL: r.URL, Digest: r.Digest}
}
