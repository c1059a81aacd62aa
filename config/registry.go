package config

import (
	"encoding/json"
	"errors"
	"net/url"

	"github.com/freecode/freecode/internal/urlpolicy"
)

// DefaultRegistryURL is the MCP Registry `freecode mcp search` and
// `install` ask unless mcp.registry.url or --registry names another.
const DefaultRegistryURL = "https://registry.modelcontextprotocol.io"

// Registry is an entry's "registry" block: the MCP Registry server it was
// installed from, which is its identity for the approval (EntryHash), the
// organization's allow-list (registryName).
type Registry struct {
	Name    string `json:"name"`             // the server's name in the registry ("io.github.owner/server")
	Version string `json:"version"`          // the concrete version installed, never "latest"
	URL     string `json:"url"`              // the registry's base URL
	Digest  string `json:"digest,omitempty"` // the package's digest when the registry gave one ("sha256:…")
}

var registryKeys = []string{"name", "version", "url", "digest"}

// registry decodes an entry's "registry" block. Every key but digest is
// required; the version is concrete and the URL one FreeCode may dial.
func (d *decoder) registry(key, server string, raw json.RawMessage) *Registry {
	m, ok := d.object(key, server, raw)
	if !ok {
		return nil
	}
	r := &Registry{}
	for k, v := range m {
		fk := key + "." + k
		switch k {
		case "name":
			d.str(fk, server, v, &r.Name)
		case "version":
			d.str(fk, server, v, &r.Version)
		case "url":
			d.str(fk, server, v, &r.URL)
		case "digest":
			d.str(fk, server, v, &r.Digest)
		default:
			d.unknown(fk, server, registryKeys)
		}
	}
	for _, p := range r.check() {
		d.fail(key+"."+p.Key, server, "%s", p.Msg)
	}
	return r
}

// check returns what is wrong with r, keys relative to the block.
func (r *Registry) check() []Problem {
	var out []Problem
	if r.Name == "" {
		out = append(out, Problem{Key: "name", Msg: "want the server's name in the registry"})
	}
	switch r.Version {
	case "":
		out = append(out, Problem{Key: "version", Msg: "want the version installed"})
	case "latest":
		out = append(out, Problem{Key: "version", Msg: `want a concrete version, not "latest"`})
	}
	if err := CheckRegistryURL(r.URL); err != nil {
		out = append(out, Problem{Key: "url", Msg: err.Error()})
	}
	return out
}

// CheckRegistryURL reports whether raw is a registry base URL FreeCode may
// dial: https, or http to a loopback address (internal/urlpolicy).
func CheckRegistryURL(raw string) error {
	if raw == "" {
		return errors.New("want the registry's URL")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	return urlpolicy.Check(u)
}

func (r *Registry) clone() *Registry {
	if r == nil {
		return nil
	}
	c := *r
	return &c
}

// mcpRegistry decodes mcp.registry: {"url": …}.
func (d *decoder) mcpRegistry(key string, raw json.RawMessage, dst *string) {
	m, ok := d.object(key, "", raw)
	if !ok {
		return
	}
	for k, v := range m {
		fk := key + "." + k
		switch k {
		case "url":
			var s string
			d.str(fk, "", v, &s)
			if err := CheckRegistryURL(s); err != nil {
				d.fail(fk, "", "%s", err.Error())
				continue
			}
			*dst = s
		default:
			d.unknown(fk, "", []string{"url"})
		}
	}
}
