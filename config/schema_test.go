package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tailscale/hujson"
)

var updateSchema = flag.Bool("update", false, "write the config schema's copy in the extension")

// The extension ships config.schema.json (contributed through
// jsonValidation): its copy is this one, byte for byte.
const extensionSchema = "../editors/vscode/schemas/config.schema.json"

func TestSchemaCopyInExtension(t *testing.T) {
	want, err := os.ReadFile("config.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if *updateSchema {
		if err := os.MkdirAll(filepath.Dir(extensionSchema), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(extensionSchema, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(extensionSchema)
	if err != nil {
		t.Fatalf("%v (run go test ./config -run TestSchemaCopyInExtension -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from config/config.schema.json: run go test ./config -run TestSchemaCopyInExtension -update", extensionSchema)
	}
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("config.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("config.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("config.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// The schema names exactly the keys the decoder reads: a key added to one
// and not the other fails here.
func TestSchemaKeys(t *testing.T) {
	data, err := os.ReadFile("config.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties struct {
			MCP struct {
				Properties map[string]json.RawMessage
			}
		}
		Definitions struct {
			Server struct {
				Properties map[string]struct {
					Properties map[string]json.RawMessage
				}
			}
		}
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]json.RawMessage) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	if diff := cmp.Diff(sorted(mcpKeys), keys(s.Properties.MCP.Properties)); diff != "" {
		t.Errorf("mcp keys (-decoder +schema):\n%s", diff)
	}
	var serverProps []string
	for k := range s.Definitions.Server.Properties {
		serverProps = append(serverProps, k)
	}
	slices.Sort(serverProps)
	if diff := cmp.Diff(sorted(serverKeys), serverProps); diff != "" {
		t.Errorf("server keys (-decoder +schema):\n%s", diff)
	}
	if diff := cmp.Diff(sorted(oauthKeys), keys(s.Definitions.Server.Properties["oauth"].Properties)); diff != "" {
		t.Errorf("oauth keys (-decoder +schema):\n%s", diff)
	}
}

// What the Go validator says of a config, and what the schema says, agree
// on a corpus of valid and invalid configs: a config Go loads without a
// word the schema accepts; one Go refuses or warns about the schema
// flags (an editor shows schema violations as warnings). The few rules a
// schema cannot state are marked, with why.
func TestSchemaAgreesWithValidator(t *testing.T) {
	type verdict int
	const (
		valid verdict = iota
		warns
		fails
	)
	tests := []struct {
		name   string
		data   string
		want   verdict
		goOnly string // set when the schema cannot see what Go refuses, and why
	}{
		{name: "empty", data: `{}`, want: valid},
		{name: "others' keys", data: `{"theme": "dark", "providers": {"x": 1}}`, want: valid},
		{name: "every knob", data: `{"mcp": {"servers": [], "pollInterval": 100, "maxResultChars": 10, "maxParallel": 64,
			"deferTools": "auto", "autoDeferTools": 5, "autoDeferTokens": 9, "idleTimeout": 1, "logLevel": "debug",
			"trustedProjects": ["/a"], "approvedProjectServers": ["/a:h"]}}`, want: valid},
		{name: "local, argv", data: `{"mcp": {"servers": [{"name": "fs", "type": "local", "command": ["npx", "-y", "x"], "env": {"A": "${env:A}"}, "cwd": "/", "inheritEnv": true, "enabled": false, "timeout": 10, "toolTimeout": 20, "protocolVersion": "2025-06-18", "maxMessageBytes": 99, "deferTools": true, "start": "onDemand", "idleTimeout": 5, "pinning": "off"}]}}`, want: valid},
		{name: "local, one string", data: `{"mcp": {"servers": [{"name": "fs", "command": "npx -y x"}]}}`, want: valid},
		{name: "command and args", data: `{"mcp": {"servers": [{"name": "fs", "command": "node", "args": ["s.js"]}]}}`, want: valid},
		{name: "type stdio", data: `{"mcp": {"servers": [{"name": "fs", "type": "stdio", "command": "node", "args": []}]}}`, want: valid},
		{name: "type http", data: `{"mcp": {"servers": [{"name": "r", "type": "http", "url": "https://h.example/mcp"}]}}`, want: valid},
		{name: "type sse", data: `{"mcp": {"servers": [{"name": "r", "type": "sse", "url": "https://h.example/sse"}]}}`, want: valid},
		{name: "remote, everything", data: `{"mcp": {"servers": [{"name": "r", "type": "remote", "url": "https://h.example/mcp", "transport": "sse",
			"headers": {"X-Team": "${env:T}"}, "caBundle": "ca.pem", "clientCert": "c.pem", "clientKey": "k.pem",
			"oauth": {"clientId": "i", "clientSecret": "${env:S}", "scopes": ["a"], "callbackPort": 8080}}]}}`, want: valid},
		{name: "oauth by metadata document", data: `{"mcp": {"servers": [{"name": "r", "url": "https://h.example/mcp",
			"oauth": {"clientMetadataUrl": "https://h.example/c.json"}}]}}`, want: valid},
		{name: "url alone", data: `{"mcp": {"servers": [{"name": "r", "url": "http://127.0.0.1:9/mcp"}]}}`, want: valid},
		{name: "with comments", data: "{\n// c\n\"mcp\": {\"servers\": [{\"name\": \"a\", \"command\": \"x\",},],},}", want: valid},

		{name: "unknown mcp key", data: `{"mcp": {"pollIntervall": 10}}`, want: warns},
		{name: "unknown server key", data: `{"mcp": {"servers": [{"name": "a", "command": "x", "disabled": true}]}}`, want: warns},
		{name: "unknown oauth key", data: `{"mcp": {"servers": [{"name": "r", "url": "https://h.example/mcp", "oauth": {"audience": "x"}}]}}`, want: warns},

		{name: "no name", data: `{"mcp": {"servers": [{"command": "x"}]}}`, want: fails},
		{name: "bad name", data: `{"mcp": {"servers": [{"name": "a__b", "command": "x"}]}}`, want: fails},
		{name: "name ends with _", data: `{"mcp": {"servers": [{"name": "a_", "command": "x"}]}}`, want: fails},
		{name: "name too long", data: `{"mcp": {"servers": [{"name": "` + string(bytes.Repeat([]byte("a"), 49)) + `", "command": "x"}]}}`, want: fails},
		{name: "name of the wrong type", data: `{"mcp": {"servers": [{"name": 3, "command": "x"}]}}`, want: fails},
		{name: "local without command", data: `{"mcp": {"servers": [{"name": "a", "type": "local"}]}}`, want: fails},
		{name: "stdio without command", data: `{"mcp": {"servers": [{"name": "a", "type": "stdio", "url": "https://h.example/"}]}}`, want: fails},
		{name: "remote without url", data: `{"mcp": {"servers": [{"name": "a", "type": "http", "command": "x"}]}}`, want: fails},
		{name: "neither command nor url", data: `{"mcp": {"servers": [{"name": "a"}]}}`, want: fails},
		{name: "both command and url, no type", data: `{"mcp": {"servers": [{"name": "a", "command": "x", "url": "https://h.example/"}]}}`, want: fails},
		{name: "unknown type", data: `{"mcp": {"servers": [{"name": "a", "type": "streamable", "command": "x"}]}}`, want: fails},
		{name: "args without command", data: `{"mcp": {"servers": [{"name": "a", "type": "stdio", "args": ["x"]}]}}`, want: fails},
		{name: "args not strings", data: `{"mcp": {"servers": [{"name": "a", "command": "x", "args": [1]}]}}`, want: fails},
		{name: "empty argv", data: `{"mcp": {"servers": [{"name": "a", "command": []}]}}`, want: fails},
		{name: "empty command line", data: `{"mcp": {"servers": [{"name": "a", "command": ""}]}}`, want: fails},
		{name: "zero timeout", data: `{"mcp": {"servers": [{"name": "a", "command": "x", "timeout": 0}]}}`, want: fails},
		{name: "fractional timeout", data: `{"mcp": {"servers": [{"name": "a", "command": "x", "timeout": 1.5}]}}`, want: fails},
		{name: "timeout a string", data: `{"mcp": {"servers": [{"name": "a", "command": "x", "timeout": "5s"}]}}`, want: fails},
		{name: "env not strings", data: `{"mcp": {"servers": [{"name": "a", "command": "x", "env": {"A": 1}}]}}`, want: fails},
		{name: "bad transport", data: `{"mcp": {"servers": [{"name": "r", "url": "https://h.example/", "transport": "ws"}]}}`, want: fails},
		{name: "bad start", data: `{"mcp": {"servers": [{"name": "a", "command": "x", "start": "lazy"}]}}`, want: fails},
		{name: "bad pinning", data: `{"mcp": {"servers": [{"name": "a", "command": "x", "pinning": false}]}}`, want: fails},
		{name: "sandbox off", data: `{"mcp": {"servers": [{"name": "a", "command": "x", "sandbox": false}]}}`, want: valid},
		{name: "sandbox block", data: `{"mcp": {"sandbox": {"network": "none"}, "servers": [{"name": "a", "command": "x", "sandbox": {"filesystem": {"allowWrite": ["/tmp/a"], "denyRead": ["/etc/b"]}, "network": {"allowedDomains": ["api.example.com"]}}}]}}`, want: valid},
		{name: "sandbox unix sockets", data: `{"mcp": {"servers": [{"name": "a", "command": "x", "sandbox": {"allowUnixSockets": true}}]}}`, want: valid},
		{name: "bad sandbox unix sockets", data: `{"mcp": {"servers": [{"name": "a", "command": "x", "sandbox": {"allowUnixSockets": "yes"}}]}}`, want: fails},
		{name: "bad sandbox network", data: `{"mcp": {"servers": [{"name": "a", "command": "x", "sandbox": {"network": "some"}}]}}`, want: fails},
		{name: "bad sandbox key", data: `{"mcp": {"servers": [{"name": "a", "command": "x", "sandbox": {"files": {}}}]}}`, want: fails},
		{name: "bad protocol version", data: `{"mcp": {"servers": [{"name": "a", "command": "x", "protocolVersion": "latest"}]}}`, want: fails},
		{name: "cert without key", data: `{"mcp": {"servers": [{"name": "r", "url": "https://h.example/", "clientCert": "c.pem"}]}}`, want: fails},
		{name: "callback port out of range", data: `{"mcp": {"servers": [{"name": "r", "url": "https://h.example/", "oauth": {"callbackPort": 70000}}]}}`, want: fails},
		{name: "maxParallel too high", data: `{"mcp": {"maxParallel": 65}}`, want: fails},
		{name: "bad deferTools", data: `{"mcp": {"deferTools": "sometimes"}}`, want: fails},
		{name: "bad logLevel", data: `{"mcp": {"logLevel": "verbose"}}`, want: fails},
		{name: "servers not an array", data: `{"mcp": {"servers": {"a": {"command": "x"}}}}`, want: fails},
		{name: "VS Code's mcp.json", data: `{"servers": {"a": {"command": "x"}}}`, want: fails},
		{name: "Claude's config", data: `{"mcpServers": {"a": {"command": "x"}}}`, want: fails},
		{name: "someone else's servers key", data: `{"servers": "eu-west", "mcpServers": ["x"]}`, want: valid},
		{name: "mcp not an object", data: `{"mcp": []}`, want: fails},

		{name: "duplicate names", data: `{"mcp": {"servers": [{"name": "a", "command": "x"}, {"name": "a", "command": "y"}]}}`, want: fails,
			goOnly: "a schema cannot say that a field is unique across array items"},
		{name: "plain http to a remote host", data: `{"mcp": {"servers": [{"name": "r", "url": "http://h.example/mcp"}]}}`, want: fails,
			goOnly: "the URL policy (loopback, metadata addresses) is Go's, shared with the dialer"},
		{name: "transport contradicts type", data: `{"mcp": {"servers": [{"name": "r", "type": "http", "transport": "sse", "url": "https://h.example/"}]}}`, want: fails,
			goOnly: "kept out of the schema to keep its conditionals few"},
		{name: "oauth beside an Authorization header", data: `{"mcp": {"servers": [{"name": "r", "url": "https://h.example/", "headers": {"Authorization": "x"}, "oauth": {}}]}}`, want: fails,
			goOnly: "header names are case-insensitive, which a schema's property names are not"},
		{name: "unterminated quote in a command line", data: `{"mcp": {"servers": [{"name": "a", "command": "node 'x"}]}}`, want: fails,
			goOnly: "shell quoting is not a regular language a pattern should carry"},
	}
	sch := compileSchema(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse("/etc/fc/config.json", []byte(tc.data))
			var goSays verdict
			var ve *ValidationError
			var pe *ParseError
			switch {
			case errors.As(err, &ve) || errors.As(err, &pe):
				goSays = fails
			case err != nil:
				t.Fatalf("Parse: %v", err)
			case len(cfg.Warnings) > 0:
				goSays = warns
			}
			if goSays != tc.want {
				t.Fatalf("Go says %v, want %v (err %v, cfg %+v)", goSays, tc.want, err, cfg)
			}
			v, err := hujson.Parse([]byte(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			v.Standardize()
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(v.Pack()))
			if err != nil {
				t.Fatal(err)
			}
			serr := sch.Validate(inst)
			switch {
			case tc.goOnly != "":
				if serr != nil {
					t.Errorf("marked as beyond the schema (%s), but the schema refuses it too: %v", tc.goOnly, serr)
				}
			case tc.want == valid && serr != nil:
				t.Errorf("Go loads it without a word, the schema refuses it: %v", serr)
			case tc.want != valid && serr == nil:
				t.Errorf("Go %s, the schema accepts it", map[verdict]string{warns: "warns", fails: "refuses it"}[tc.want])
			}
		})
	}
}
