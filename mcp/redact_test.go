package mcp

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/config"
)

func TestSecretValue(t *testing.T) {
	tests := []struct {
		name, value string
		want        bool
	}{
		// Plain settings: never masked, whatever their length.
		{"MODE", "deep", false},
		{"DEBUG", "1", false},
		{"LOG_LEVEL", "debug", false},
		{"NODE_ENV", "production", false},
		{"REGION", "eu-west-1", false},
		{"ROOT", "/home/user/project-2024/src", false},
		{"DIR", "./data/cache-v20240101", false},
		{"WIN", `C:\Users\dev\AppData\x64`, false},
		{"GREETING", "hello world 12345 again", false},
		{"BASE", "https://api.example.com/v1/123", false},
		{"DIGITS", "12345678901234567890", false},
		// Names that say secret: masked, unless a switch.
		{"API_KEY", "abcd", true},
		{"GITHUB_TOKEN", "ghp_x", true},
		{"DB_PASSWORD", "hunter2", true},
		{"db_passwd", "hunter2", true},
		{"CLIENT_SECRET", "s3cr3t", true},
		{"AUTH_HEADER", "Bearer abc", true},
		{"AWS_CREDENTIALS", "x y z", true},
		{"PRIVATE_PEM", "-----BEGIN KEY-----", true},
		{"SESSION_COOKIE", "sid=1", true},
		{"KEY_FILE", "/home/u/.ssh/id", true}, // a token may start with '/'
		{"AUTH_ENABLED", "true", false},
		{"USE_TOKEN", "off", false},
		// Generated-looking values: masked under any name.
		{"LIT", "literal-Secret-1", true},
		{"X", "sk-ant-api03-AbCdEf0123456789", true},
		{"HASH", "9f86d081884c7d659a2feaa0c55ad015", true},
		{"X", "short1abc", false}, // under 16 bytes
	}
	for _, tt := range tests {
		if got := secretValue(tt.name, tt.value); got != tt.want {
			t.Errorf("secretValue(%q, %q) = %v, want %v", tt.name, tt.value, got, tt.want)
		}
	}
}

func TestEnvSecrets(t *testing.T) {
	lookup := func(name string) (string, bool) {
		v, ok := map[string]string{"GH_TOKEN": "gho_abc", "HOST": "db.internal", "PLAIN": "deep", "KEYVAL": "zz-top"}[name]
		return v, ok
	}
	raw := config.Server{Env: map[string]string{
		"MODE":     "deep",
		"OPTS":     "--token=${env:GH_TOKEN} --host=${env:HOST} --mode=${env:PLAIN}",
		"DB_URL":   "postgres://app:pw-9xq@${env:HOST}/db?sslmode=require&apikey=k-123",
		"API_KEY":  "${env:KEYVAL}",
		"NOTHING":  "1",
		"ENDPOINT": "https://example.com/path?q=search",
	}}
	expanded, err := raw.Expanded(lookup)
	if err != nil {
		t.Fatal(err)
	}
	got := envSecrets(raw, expanded, lookup)
	slices.Sort(got)
	want := []string{"gho_abc", "k-123", "pw-9xq", "zz-top"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("envSecrets (-want +got):\n%s", diff)
	}
}
