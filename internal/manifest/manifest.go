// Package manifest keeps what FreeCode knows about one MCP server between
// runs: its last tools/list (with its server info and protocol version),
// from which a server started on demand is registered without starting it,
// and the tool definitions the user accepted (pins), against which every
// later list is compared.
//
// One file per server, <dir>/<key>.json, where key is a hash of the
// server's identity (config.ManifestKey: its scope and name, and for a
// project server the project): an edit of the entry keeps the file, so
// what was accepted, and what awaits review, stays with the server. Files are written whole, atomically, under
// internal/filelock, mode 0600 in a 0700 directory, and are bounded in
// size. A file is trusted only if it is a regular file no one else may
// write, within the bound, valid JSON of this version, for this very key,
// and every pin in it checks out against its hash; anything else is
// ignored, as if there were no file.
//
// Pins are kept in the same file as the tool list: the two are written
// together, so a crash cannot leave a list that the pins do not describe,
// and a pin whose definition equals the listed one is stored as its hash
// alone.
package manifest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/canonjson"
)

// Version is the version of the file format this package reads and writes.
const Version = 1

// ServerInfo is the name and version a server reported in initialize.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Manifest is one server's manifest.
type Manifest struct {
	// Key is the hash of the server's identity; it names the file.
	Key string
	// Server is the entry's name when the manifest was written, for people
	// reading the file; nothing is decided by it.
	Server          string
	ServerInfo      *ServerInfo
	ProtocolVersion string
	// Tools is the server's last tools/list, in the order listed, with
	// input and output schemas as canonical JSON (json.RawMessage).
	Tools []*mcpsdk.Tool
	// Pinned says that the server's tools have been pinned: its first
	// list was, and every list since is compared against the pins.
	Pinned bool
	// Pins are the accepted definitions, by tool name.
	Pins map[string]*Pin
}

// Pin is one tool's accepted definition.
type Pin struct {
	Def Def
	// New marks a tool first seen on a server whose tools were pinned
	// already: its definition is pinned as it came, so that a later change
	// is caught, but the user has not looked at it yet.
	New bool
	// Rejected is the hash of a definition of this tool that the user
	// rejected, or "".
	Rejected string
}

// Def is the part of a tool's definition that is pinned: what a model is
// shown and what decides how a call is treated.
type Def struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  Annotations     `json:"annotations"`
	// HiddenFromModel is true for a tool its server declares for its app
	// alone: an MCP Apps _meta.ui.visibility that lacks "model". A server
	// that turns such a tool into one a model is shown changes what a
	// model sees, which is what pinning holds until accepted.
	HiddenFromModel bool `json:"hiddenFromModel,omitempty"`
}

// Annotations are a tool's annotations with MCP's defaults applied, so an
// absent hint and the same hint spelt out are one definition.
type Annotations struct {
	Title       string `json:"title,omitempty"`
	ReadOnly    bool   `json:"readOnlyHint"`
	Destructive bool   `json:"destructiveHint"`
	Idempotent  bool   `json:"idempotentHint"`
	OpenWorld   bool   `json:"openWorldHint"`
}

// DefOf returns the pinned part of t, its schemas in canonical JSON.
func DefOf(t *mcpsdk.Tool) (Def, error) {
	d := Def{Name: t.Name, Title: t.Title, Description: t.Description,
		Annotations: Annotations{Destructive: true, OpenWorld: true}}
	var err error
	if d.InputSchema, err = canonical(t.InputSchema); err != nil {
		return Def{}, fmt.Errorf("tool %q: inputSchema: %w", t.Name, err)
	}
	if d.OutputSchema, err = canonical(t.OutputSchema); err != nil {
		return Def{}, fmt.Errorf("tool %q: outputSchema: %w", t.Name, err)
	}
	d.HiddenFromModel = hiddenFromModel(t.Meta)
	if a := t.Annotations; a != nil {
		d.Annotations.Title = a.Title
		d.Annotations.ReadOnly = a.ReadOnlyHint
		d.Annotations.Idempotent = a.IdempotentHint
		if a.DestructiveHint != nil {
			d.Annotations.Destructive = *a.DestructiveHint
		}
		if a.OpenWorldHint != nil {
			d.Annotations.OpenWorld = *a.OpenWorldHint
		}
	}
	return d, nil
}

// hiddenFromModel reports whether meta declares the tool for its app
// alone: _meta.ui.visibility is a list without "model" (the orchestrator's
// ToolUI.ForModel reads it the same way).
func hiddenFromModel(meta map[string]any) bool {
	ui, ok := meta["ui"].(map[string]any)
	if !ok {
		return false
	}
	list, ok := ui["visibility"].([]any)
	return ok && !slices.Contains(list, any("model"))
}

// Hash returns the hex SHA-256 of d's canonical JSON.
func (d Def) Hash() string {
	b, _ := canonjson.AppendValue(nil, d) // cannot fail: the schemas are canonical JSON already
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// canonical returns a schema as canonical JSON; nil (or JSON null) is nil.
func canonical(v any) (json.RawMessage, error) {
	switch s := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if t := bytes.TrimSpace(s); len(t) == 0 || string(t) == "null" {
			return nil, nil
		}
		b, err := canonjson.Append(nil, s)
		return b, err
	}
	b, err := canonjson.AppendValue(nil, v)
	if err != nil {
		return nil, err
	}
	if string(b) == "null" {
		return nil, nil
	}
	return b, nil
}

// fileManifest is a Manifest as the file holds it.
type fileManifest struct {
	Version         int               `json:"version"`
	Key             string            `json:"key"`
	Server          string            `json:"server,omitempty"`
	ServerInfo      *ServerInfo       `json:"serverInfo,omitempty"`
	ProtocolVersion string            `json:"protocolVersion,omitempty"`
	Tools           []json.RawMessage `json:"tools"`
	Pinned          bool              `json:"pinned,omitempty"`
	Pins            []filePin         `json:"pins,omitempty"`
}

// filePin is a Pin as the file holds it: its definition only when it is
// not that of the listed tool of its name.
type filePin struct {
	Name     string `json:"name"`
	Hash     string `json:"hash"`
	Def      *Def   `json:"def,omitempty"`
	New      bool   `json:"new,omitempty"`
	Rejected string `json:"rejected,omitempty"`
}

// encode returns the file's bytes: canonical JSON, pins sorted by name.
func (m *Manifest) encode() ([]byte, error) {
	f := fileManifest{Version: Version, Key: m.Key, Server: m.Server, ServerInfo: m.ServerInfo,
		ProtocolVersion: m.ProtocolVersion, Tools: make([]json.RawMessage, 0, len(m.Tools)), Pinned: m.Pinned}
	listed := make(map[string]string, len(m.Tools)) // name → hash of its definition
	for _, t := range m.Tools {
		b, err := canonjson.AppendValue(nil, t)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		f.Tools = append(f.Tools, b)
		d, err := DefOf(t)
		if err != nil {
			return nil, err
		}
		listed[t.Name] = d.Hash()
	}
	for _, name := range slices.Sorted(maps.Keys(m.Pins)) {
		p := m.Pins[name]
		fp := filePin{Name: name, Hash: p.Def.Hash(), New: p.New, Rejected: p.Rejected}
		if listed[name] != fp.Hash {
			def := p.Def
			fp.Def = &def
		}
		f.Pins = append(f.Pins, fp)
	}
	return canonjson.AppendValue(nil, f)
}

// CorruptError is a file that is not to be trusted, and why.
type CorruptError struct {
	Path string
	Why  string
}

// Error says which file was ignored and why.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("manifest %s ignored: %s", e.Path, e.Why)
}

// decode parses and checks the file at path, which is to hold key.
func decode(path, key string, data []byte) (*Manifest, error) {
	bad := func(format string, args ...any) error {
		return &CorruptError{Path: path, Why: fmt.Sprintf(format, args...)}
	}
	var f fileManifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&f); err != nil {
		return nil, bad("not a manifest: %v", err)
	}
	if dec.More() {
		return nil, bad("more than one JSON value")
	}
	if f.Version != Version {
		return nil, bad("version %d, want %d", f.Version, Version)
	}
	if f.Key != key {
		return nil, bad("it is the manifest of another server entry")
	}
	m := &Manifest{Key: key, Server: f.Server, ServerInfo: f.ServerInfo, ProtocolVersion: f.ProtocolVersion,
		Pinned: f.Pinned, Pins: make(map[string]*Pin, len(f.Pins))}
	listed := make(map[string]Def, len(f.Tools))
	for i, raw := range f.Tools {
		t, err := decodeTool(raw)
		if err != nil {
			return nil, bad("tools[%d]: %v", i, err)
		}
		if _, dup := listed[t.Name]; dup {
			return nil, bad("tool %q is listed twice", t.Name)
		}
		d, err := DefOf(t)
		if err != nil {
			return nil, bad("%v", err)
		}
		listed[t.Name] = d
		m.Tools = append(m.Tools, t)
	}
	for _, fp := range f.Pins {
		if fp.Name == "" {
			return nil, bad("a pin has no name")
		}
		if _, dup := m.Pins[fp.Name]; dup {
			return nil, bad("tool %q is pinned twice", fp.Name)
		}
		if fp.Rejected != "" && !isHash(fp.Rejected) {
			return nil, bad("pin %q: rejected is not a hash", fp.Name)
		}
		var def Def
		if fp.Def != nil {
			def = *fp.Def
			// Re-canonicalize: the hash is over canonical schemas.
			var err error
			if def.InputSchema, err = canonical(def.InputSchema); err != nil {
				return nil, bad("pin %q: %v", fp.Name, err)
			}
			if def.OutputSchema, err = canonical(def.OutputSchema); err != nil {
				return nil, bad("pin %q: %v", fp.Name, err)
			}
		} else {
			d, ok := listed[fp.Name]
			if !ok {
				return nil, bad("pin %q has no definition and no listed tool", fp.Name)
			}
			def = d
		}
		if def.Name != fp.Name || def.Hash() != fp.Hash {
			return nil, bad("pin %q does not match its hash", fp.Name)
		}
		m.Pins[fp.Name] = &Pin{Def: def, New: fp.New, Rejected: fp.Rejected}
	}
	return m, nil
}

// decodeTool decodes one listed tool, keeping its schemas as canonical
// JSON: decoded into maps they would lose big numbers' digits and cost
// many times their size.
func decodeTool(raw json.RawMessage) (*mcpsdk.Tool, error) {
	var t mcpsdk.Tool
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, err
	}
	if strings.TrimSpace(t.Name) == "" {
		return nil, errors.New("no name")
	}
	var schemas struct {
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal(raw, &schemas); err != nil {
		return nil, err
	}
	in, err := canonical(schemas.InputSchema)
	if err != nil {
		return nil, err
	}
	out, err := canonical(schemas.OutputSchema)
	if err != nil {
		return nil, err
	}
	t.InputSchema, t.OutputSchema = nil, nil
	if in != nil {
		t.InputSchema = in
	}
	if out != nil {
		t.OutputSchema = out
	}
	return &t, nil
}

// isHash reports whether s is a hex SHA-256.
func isHash(s string) bool {
	if len(s) != sha256.Size*2 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}
