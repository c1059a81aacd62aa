package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseOAuth(t *testing.T) {
	data := `{"mcp": {"servers": [
		{"name": "gh", "url": "https://mcp.example.com/mcp",
		 "oauth": {"clientId": "Iv1.abc", "clientSecret": "${env:GH_SECRET}", "scopes": ["repo", "read:org"], "callbackPort": 33418}},
		{"name": "cimd", "url": "https://mcp.example.org/mcp",
		 "oauth": {"clientMetadataUrl": "https://freecode.example/client.json"}},
		{"name": "dcr", "url": "https://mcp.example.net/mcp", "oauth": {}},
		{"name": "none", "url": "https://mcp.example.io/mcp"},
	]}}`
	cfg, err := Parse("c.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	var got []*OAuth
	for _, s := range cfg.MCP.Servers {
		got = append(got, s.OAuth)
	}
	want := []*OAuth{
		{ClientID: "Iv1.abc", ClientSecret: "${env:GH_SECRET}", Scopes: []string{"repo", "read:org"}, CallbackPort: 33418},
		{ClientMetadataURL: "https://freecode.example/client.json"},
		{},
		nil,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OAuth of each server (-want +got):\n%s", diff)
	}
}

func TestOAuthProblems(t *testing.T) {
	tests := []struct {
		name, entry string
		want        []string
	}{
		{
			"wrong types",
			`{"name": "r", "url": "https://h/mcp", "oauth": {"clientId": 7, "scopes": "repo", "callbackPort": "80"}}`,
			[]string{
				`mcp.servers[0].oauth.callbackPort (server "r"): want a port number from 1 to 65535`,
				`mcp.servers[0].oauth.clientId (server "r"): want a string`,
				`mcp.servers[0].oauth.scopes (server "r"): want an array of strings`,
			},
		},
		{
			"not an object",
			`{"name": "r", "url": "https://h/mcp", "oauth": "yes"}`,
			[]string{`mcp.servers[0].oauth (server "r"): want an object`},
		},
		{
			"misspelt key",
			`{"name": "r", "url": "https://h/mcp", "oauth": {"clientID": "x", "somethingNew": 1}}`,
			[]string{`mcp.servers[0].oauth.clientID (server "r"): unknown key; did you mean "clientId"?`},
		},
		{
			"secret without id, port out of range",
			`{"name": "r", "url": "https://h/mcp", "oauth": {"clientSecret": "s3cr3t-value", "callbackPort": 70000}}`,
			[]string{
				`mcp.servers[0].oauth.callbackPort (server "r"): want a port number from 1 to 65535`,
				`mcp.servers[0].oauth.clientSecret (server "r"): a client secret needs the clientId it belongs to`,
			},
		},
		{
			"id and metadata URL both",
			`{"name": "r", "url": "https://h/mcp", "oauth": {"clientId": "a", "clientMetadataUrl": "https://x/c.json"}}`,
			[]string{`mcp.servers[0].oauth.clientMetadataUrl (server "r"): clientId and clientMetadataUrl are two ways to name the client: set one`},
		},
		{
			"metadata URL not https",
			`{"name": "r", "url": "https://h/mcp", "oauth": {"clientMetadataUrl": "http://x/c.json"}}`,
			[]string{`mcp.servers[0].oauth.clientMetadataUrl (server "r"): want an https URL with a path (and no user info or fragment), such as https://example.com/freecode/client.json`},
		},
		{
			"metadata URL without a path",
			`{"name": "r", "url": "https://h/mcp", "oauth": {"clientMetadataUrl": "https://x/"}}`,
			[]string{`mcp.servers[0].oauth.clientMetadataUrl (server "r"): want an https URL with a path (and no user info or fragment), such as https://example.com/freecode/client.json`},
		},
		{
			"bad scopes",
			`{"name": "r", "url": "https://h/mcp", "oauth": {"scopes": ["ok", "two words", ""]}}`,
			[]string{
				`mcp.servers[0].oauth.scopes[1] (server "r"): a scope is one non-empty word without spaces, quotes or backslashes, not "two words"`,
				`mcp.servers[0].oauth.scopes[2] (server "r"): a scope is one non-empty word without spaces, quotes or backslashes, not ""`,
			},
		},
		{
			"on a local server",
			`{"name": "l", "command": ["x"], "oauth": {"clientId": "a"}}`,
			[]string{`mcp.servers[0].oauth (server "l"): oauth is for remote servers only`},
		},
		{
			"with an Authorization header",
			`{"name": "r", "url": "https://h/mcp", "headers": {"authorization": "Bearer x"}, "oauth": {}}`,
			[]string{`mcp.servers[0].oauth (server "r"): oauth and an Authorization header both set the Authorization header: drop one`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.json", []byte(`{"mcp": {"servers": [`+tc.entry+`]}}`))
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Parse error = %v, want a *ValidationError", err)
			}
			var got []string
			for _, p := range ve.Problems {
				got = append(got, p.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), "s3cr3t-value") {
				t.Errorf("the error shows the client secret: %v", err)
			}
		})
	}
}

func TestOAuthExpandRedact(t *testing.T) {
	s := remote("r", "https://h/mcp")
	s.OAuth = &OAuth{ClientID: "id", ClientSecret: "${env:SECRET}", Scopes: []string{"a"}}
	lookup := func(name string) (string, bool) {
		if name == "SECRET" {
			return "s3cr3t-value", true
		}
		return "", false
	}
	x, err := s.Expanded(lookup)
	if err != nil {
		t.Fatal(err)
	}
	if x.OAuth.ClientSecret != "s3cr3t-value" || s.OAuth.ClientSecret != "${env:SECRET}" {
		t.Errorf("Expanded: secret %q (original now %q); want the value, the original untouched", x.OAuth.ClientSecret, s.OAuth.ClientSecret)
	}
	if r := x.Redacted(); r.OAuth.ClientSecret != "***" || r.OAuth.ClientID != "id" || x.OAuth.ClientSecret != "s3cr3t-value" {
		t.Errorf("Redacted: %+v; want the secret as *** and the rest kept, the original untouched", r.OAuth)
	}
	_, err = s.Expanded(func(string) (string, bool) { return "", false })
	if err == nil || !strings.Contains(err.Error(), "oauth.clientSecret: environment variable SECRET is not set") {
		t.Errorf("Expanded with SECRET unset: %v; want it to name the key and the variable", err)
	}
	other := s.clone()
	other.OAuth.Scopes[0] = "b"
	if s.OAuth.Scopes[0] != "a" || s.Equal(other) {
		t.Errorf("clone shares the scopes, or Equal ignores them")
	}
}

func TestAddServerWritesOAuth(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	s := remote("gh", "https://mcp.example.com/mcp")
	s.OAuth = &OAuth{ClientID: "Iv1.abc", ClientSecret: "${env:GH_SECRET}", Scopes: []string{"repo"}, CallbackPort: 33418}
	if err := AddServer(path, s); err != nil {
		t.Fatal(err)
	}
	bad := remote("bad", "https://h/mcp")
	bad.OAuth = &OAuth{ClientSecret: "x"}
	if err := AddServer(path, bad); err == nil || !strings.Contains(err.Error(), "oauth.clientSecret: a client secret needs the clientId") {
		t.Errorf("AddServer of a secret without an id: %v", err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Server{s}, cfg.MCP.Servers); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
}

func TestApprovalKeyCoversOAuth(t *testing.T) {
	dir := t.TempDir()
	base := remote("api", "https://h/mcp")
	base.Scope = ScopeProject
	key := ApprovalKey(dir, base)
	empty := base.clone()
	empty.OAuth = &OAuth{}
	if ApprovalKey(dir, empty) != key {
		t.Error("an empty oauth object changed the approval key; it configures nothing")
	}
	for name, o := range map[string]*OAuth{
		"clientId":          {ClientID: "x"},
		"clientMetadataUrl": {ClientMetadataURL: "https://evil.example/c.json"},
		"scopes":            {Scopes: []string{"admin"}},
		"callbackPort":      {CallbackPort: 8080},
	} {
		s := base.clone()
		s.OAuth = o
		if ApprovalKey(dir, s) == key {
			t.Errorf("changing oauth.%s kept the approval key", name)
		}
	}
}
