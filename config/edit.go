package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"
)

// The edits below change only the mcp section of the config file, through
// UpdateFile: every other byte of the file stays as it was.

// AddServer adds s to mcp.servers in the config file at path. It is an error
// if s breaks a rule or a server of that name exists. Only the fields that
// differ from the defaults are written; durations are milliseconds and the
// command is an argv array. Zero durations and message size mean the
// defaults, no protocol version negotiates one; s.Enabled is taken as it is (false writes
// "enabled": false), so set it for an enabled server.
func AddServer(path string, s Server) error {
	s = s.WithDefaults()
	var problems []string
	if err := CheckName(s.Name); err != nil {
		problems = append(problems, err.Error())
	}
	for _, p := range checkServer(s) {
		problems = append(problems, strings.TrimPrefix(p.Key, ".")+": "+p.Msg)
	}
	if s.Registry != nil {
		for _, p := range s.Registry.check() {
			problems = append(problems, "registry."+p.Key+": "+p.Msg)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("adding server %q: %s", s.Name, strings.Join(problems, "; "))
	}
	entry, err := marshal(toFile(s))
	if err != nil {
		return err
	}
	return UpdateFile(path, func(root *hujson.Value) error {
		servers, err := serverNames(path, root)
		if err != nil {
			return err
		}
		if slices.Contains(servers, s.Name) {
			return fmt.Errorf("adding server %q: %s already has a server of that name", s.Name, path)
		}
		if err := ensure(root, "/mcp", "{}", "/mcp/servers", "[]"); err != nil {
			return err
		}
		return patch(root, "add", "/mcp/servers/-", entry)
	})
}

// installKeys are the keys of an entry that an install from the MCP
// Registry decides: how the server runs and which version it is.
var installKeys = []string{"type", "command", "env", "url", "transport", "headers", "registry"}

// UpdateInstalled rewrites what an install from the MCP Registry wrote of
// the entry named s.Name in the file at path (its type, command, env, url,
// transport, headers and registry block) to s's, and leaves every other
// key of the entry (its timeouts, sandbox, enabled, …) and their comments
// as they are. Its name, and so its manifest (ManifestKey), stay: what the
// new version lists is checked against what the user accepted before.
func UpdateInstalled(path string, s Server) error {
	s = s.WithDefaults()
	var problems []string
	for _, p := range checkServer(s) {
		problems = append(problems, strings.TrimPrefix(p.Key, ".")+": "+p.Msg)
	}
	if s.Registry == nil {
		problems = append(problems, "registry: want the registry block of the version installed")
	} else {
		for _, p := range s.Registry.check() {
			problems = append(problems, "registry."+p.Key+": "+p.Msg)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("updating server %q: %s", s.Name, strings.Join(problems, "; "))
	}
	raw, err := marshal(toFile(s))
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return err
	}
	return UpdateFile(path, func(root *hujson.Value) error {
		i, err := serverIndex(path, root, s.Name)
		if err != nil {
			return err
		}
		for _, k := range installKeys {
			ptr := fmt.Sprintf("/mcp/servers/%d/%s", i, k)
			switch v, ok := fields[k]; {
			case ok:
				err = patch(root, "add", ptr, v) // add replaces a member that is there
			case root.Find(ptr) != nil:
				err = patch(root, "remove", ptr, nil)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// RemoveServer removes the server named name from the config file at path.
func RemoveServer(path, name string) error {
	return UpdateFile(path, func(root *hujson.Value) error {
		i, err := serverIndex(path, root, name)
		if err != nil {
			return err
		}
		return patch(root, "remove", fmt.Sprintf("/mcp/servers/%d", i), nil)
	})
}

// SetEnabled sets the enabled flag of the server named name in the config
// file at path. Enabling removes the entry's "enabled" key, true being the
// default, so that disabling and enabling leave the file as it was.
func SetEnabled(path, name string, enabled bool) error {
	return UpdateFile(path, func(root *hujson.Value) error {
		i, err := serverIndex(path, root, name)
		if err != nil {
			return err
		}
		ptr := fmt.Sprintf("/mcp/servers/%d/enabled", i)
		if enabled {
			if root.Find(ptr) == nil {
				return nil
			}
			return patch(root, "remove", ptr, nil)
		}
		return patch(root, "add", ptr, []byte("false"))
	})
}

// SetTrusted records (or forgets) that the user trusts the project in
// projectDir, by its real path, in mcp.trustedProjects of the config file
// at path.
func SetTrusted(path, projectDir string, trusted bool) error {
	dir, err := realPath(projectDir)
	if err != nil {
		return err
	}
	return UpdateFile(path, func(root *hujson.Value) error {
		list, err := stringList(path, root, "/mcp/"+keyTrusted)
		if err != nil {
			return err
		}
		if !trusted {
			for i := len(list) - 1; i >= 0; i-- {
				if samePath(list[i], dir) {
					if err := patch(root, "remove", fmt.Sprintf("/mcp/%s/%d", keyTrusted, i), nil); err != nil {
						return err
					}
				}
			}
			return nil
		}
		if slices.ContainsFunc(list, func(p string) bool { return samePath(p, dir) }) {
			return nil
		}
		return appendString(root, keyTrusted, dir)
	})
}

// Approve records in mcp.approvedProjectServers of the config file at path
// that the user approved the project server entry whose ApprovalKey is key.
func Approve(path, key string) error {
	return UpdateFile(path, func(root *hujson.Value) error {
		list, err := stringList(path, root, "/mcp/"+keyApproved)
		if err != nil {
			return err
		}
		if slices.Contains(list, key) {
			return nil
		}
		return appendString(root, keyApproved, key)
	})
}

// Unapprove removes key from mcp.approvedProjectServers of the config file
// at path, so that project server asks again.
func Unapprove(path, key string) error {
	return UpdateFile(path, func(root *hujson.Value) error {
		list, err := stringList(path, root, "/mcp/"+keyApproved)
		if err != nil {
			return err
		}
		for i := len(list) - 1; i >= 0; i-- {
			if list[i] == key {
				if err := patch(root, "remove", fmt.Sprintf("/mcp/%s/%d", keyApproved, i), nil); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func appendString(root *hujson.Value, key, s string) error {
	if err := ensure(root, "/mcp", "{}", "/mcp/"+key, "[]"); err != nil {
		return err
	}
	b, err := marshal(s)
	if err != nil {
		return err
	}
	return patch(root, "add", "/mcp/"+key+"/-", b)
}

// WithDefaults returns s with its zero fields set to the defaults, as Parse
// sets them. Parse applies them once; code that builds a Server by hand
// (the CLI, tests) calls this instead of restating a default.
func (s Server) WithDefaults() Server {
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.ToolTimeout == 0 {
		s.ToolTimeout = DefaultToolTimeout
	}
	if s.MaxMessageBytes == 0 {
		s.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if s.Type == TypeRemote && s.Transport == "" {
		s.Transport = TransportAuto
	}
	return s
}

// fileServer is a server entry as AddServer writes it: keys in this order,
// defaults left out.
type fileServer struct {
	Name            string            `json:"name"`
	Type            string            `json:"type"`
	Command         []string          `json:"command,omitempty"`
	Env             map[string]string `json:"env,omitempty"`
	Cwd             string            `json:"cwd,omitempty"`
	InheritEnv      bool              `json:"inheritEnv,omitempty"`
	URL             string            `json:"url,omitempty"`
	Transport       string            `json:"transport,omitempty"`
	Headers         map[string]string `json:"headers,omitempty"`
	CABundle        string            `json:"caBundle,omitempty"`
	ClientCert      string            `json:"clientCert,omitempty"`
	ClientKey       string            `json:"clientKey,omitempty"`
	OAuth           *fileOAuth        `json:"oauth,omitempty"`
	Enabled         *bool             `json:"enabled,omitempty"`
	Timeout         int64             `json:"timeout,omitempty"`
	ToolTimeout     int64             `json:"toolTimeout,omitempty"`
	ProtocolVersion string            `json:"protocolVersion,omitempty"`
	MaxMessageBytes int               `json:"maxMessageBytes,omitempty"`
	DeferTools      *bool             `json:"deferTools,omitempty"`
	Start           string            `json:"start,omitempty"`
	IdleTimeout     int64             `json:"idleTimeout,omitempty"`
	Pinning         string            `json:"pinning,omitempty"`
	Registry        *Registry         `json:"registry,omitempty"`
}

func toFile(s Server) fileServer {
	f := fileServer{
		Name: s.Name, Type: s.Type, Command: s.Command, Env: s.Env, Cwd: s.Cwd, InheritEnv: s.InheritEnv,
		URL: s.URL, Headers: s.Headers, CABundle: s.CABundle, ClientCert: s.ClientCert, ClientKey: s.ClientKey,
		OAuth:      toFileOAuth(s.OAuth),
		DeferTools: s.DeferTools,
		Registry:   s.Registry.clone(),
	}
	if s.Type == TypeRemote && s.Transport != TransportAuto {
		f.Transport = s.Transport
	}
	if !s.Enabled {
		f.Enabled = new(false)
	}
	if s.Timeout != DefaultTimeout {
		f.Timeout = s.Timeout.Milliseconds()
	}
	if s.ToolTimeout != DefaultToolTimeout {
		f.ToolTimeout = s.ToolTimeout.Milliseconds()
	}
	f.ProtocolVersion = s.ProtocolVersion
	if s.MaxMessageBytes != DefaultMaxMessageBytes {
		f.MaxMessageBytes = s.MaxMessageBytes
	}
	if s.Start == StartOnDemand {
		f.Start = s.Start
	}
	f.IdleTimeout = s.IdleTimeout.Milliseconds()
	if s.PinningOff {
		f.Pinning = pinningOff
	}
	return f
}

// marshal encodes v as JSON without escaping <, > and & (a command line may
// hold them, and the file is read by people).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

// patch applies one JSON Patch operation to root. A removal keeps the
// trailing-comma style of the array or object it removes from, and the
// indent of what follows the value removed.
func patch(root *hujson.Value, op, ptr string, value []byte) error {
	if op == "remove" {
		if parent := root.Find(ptr[:strings.LastIndexByte(ptr, '/')]); parent != nil {
			vals, _, _ := elems(parent)
			if n := len(vals); n > 1 && vals[n-1].AfterExtra != nil {
				defer func() {
					if vals, _, _ := elems(parent); len(vals) > 0 && vals[len(vals)-1].AfterExtra == nil {
						vals[len(vals)-1].AfterExtra = hujson.Extra{}
					}
				}()
			}
			if i := memberIndex(parent, ptr[strings.LastIndexByte(ptr, '/')+1:]); i >= 0 {
				if ind, ok := lineIndent(*extraAfter(parent, i)); ok {
					defer keepIndent(parent, i, ind)
				}
			}
		}
	}
	var p []byte
	if value == nil {
		p = fmt.Appendf(nil, `[{"op": %q, "path": %q}]`, op, ptr)
	} else {
		p = fmt.Appendf(nil, `[{"op": %q, "path": %q, "value": %s}]`, op, ptr, value)
	}
	return root.Patch(p)
}

// memberIndex returns the index of the member or element tok (a JSON
// pointer's last token) of composite v, or -1.
func memberIndex(v *hujson.Value, tok string) int {
	switch c := v.Value.(type) {
	case *hujson.Object:
		name := strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		for i := len(c.Members) - 1; i >= 0; i-- {
			if lit, ok := c.Members[i].Name.Value.(hujson.Literal); ok && lit.String() == name {
				return i
			}
		}
	case *hujson.Array:
		if n, err := strconv.Atoi(tok); err == nil && n >= 0 && n < len(c.Elements) {
			return n
		}
	}
	return -1
}

// extraAfter returns the extra that follows the i-th value of composite v:
// the next one's before it, or the closing bracket's.
func extraAfter(v *hujson.Value, i int) *hujson.Extra {
	_, before, after := elems(v)
	if i+1 < len(before) {
		return before[i+1]
	}
	return after
}

// keepIndent gives what now follows the (i-1)-th value of composite v,
// once the i-th was removed, its own indent ind back. Removing a value
// whose line was begun by a comment of the value before it ("x", //
// note) moves that comment onto the next line's extra with the removed
// value's indent: a closing bracket would end up indented as an entry.
func keepIndent(v *hujson.Value, i int, ind string) {
	var extra *hujson.Extra
	if _, before, after := elems(v); i < len(before) {
		extra = before[i]
	} else {
		extra = after
	}
	if got, ok := lineIndent(*extra); ok && got != ind {
		nl := bytes.LastIndexByte(*extra, '\n')
		*extra = append((*extra)[:nl+1:nl+1], ind...)
	}
}

// ensure adds each (pointer, empty value) pair that is missing, in order.
func ensure(root *hujson.Value, pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if v := root.Find(pairs[i]); v != nil && !isNull(standard(root, pairs[i])) {
			continue
		}
		if err := patch(root, "add", pairs[i], []byte(pairs[i+1])); err != nil {
			return err
		}
	}
	return nil
}

// standard returns the standard-JSON form of the value at ptr, or nil if
// there is none.
func standard(root *hujson.Value, ptr string) []byte {
	v := root.Find(ptr)
	if v == nil {
		return nil
	}
	c := v.Clone()
	c.Standardize()
	return c.Pack()
}

// checkShape refuses to edit a file whose mcp section has the wrong shape:
// fixing it is the user's call, not ours.
func checkShape(path string, root *hujson.Value) error {
	if _, ok := root.Value.(*hujson.Object); !ok {
		return fmt.Errorf("%s: the file must hold a JSON object", path)
	}
	if v := root.Find("/mcp"); v != nil {
		if _, ok := v.Value.(*hujson.Object); !ok && !isNull(standard(root, "/mcp")) {
			return fmt.Errorf("%s: mcp: want an object; fix the file first", path)
		}
	}
	return nil
}

// serverNames returns the names of mcp.servers in order ("" for an entry
// without one).
func serverNames(path string, root *hujson.Value) ([]string, error) {
	if err := checkShape(path, root); err != nil {
		return nil, err
	}
	raw := standard(root, "/mcp/servers")
	if raw == nil {
		return nil, nil
	}
	var entries []struct {
		Name any `json:"name"`
	}
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("%s: mcp.servers: want an array of server entries; fix the file first", path)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i], _ = e.Name.(string)
	}
	return names, nil
}

var errNoServer = errors.New("no such server")

func serverIndex(path string, root *hujson.Value, name string) (int, error) {
	names, err := serverNames(path, root)
	if err != nil {
		return 0, err
	}
	i := slices.Index(names, name)
	if i < 0 {
		return 0, fmt.Errorf("%s: %w %q", path, errNoServer, name)
	}
	return i, nil
}

func stringList(path string, root *hujson.Value, ptr string) ([]string, error) {
	if err := checkShape(path, root); err != nil {
		return nil, err
	}
	raw := standard(root, ptr)
	if raw == nil || isNull(raw) {
		if raw != nil {
			return nil, patch(root, "remove", ptr, nil)
		}
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("%s: %s: want an array of strings; fix the file first", path, strings.ReplaceAll(ptr[1:], "/", "."))
	}
	return list, nil
}

// realPath returns the absolute path of dir with symbolic links resolved;
// for a path that does not exist, the clean absolute path.
func realPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return abs, nil
}

func samePath(a, b string) bool {
	ra, err1 := realPath(a)
	rb, err2 := realPath(b)
	return err1 == nil && err2 == nil && ra == rb
}
