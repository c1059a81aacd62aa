package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSecretRefs(t *testing.T) {
	tests := []struct {
		name string
		s    Server
		want []string
	}{
		{"none", Server{Env: map[string]string{"A": "plain", "B": "${env:HOME}"}}, nil},
		{
			"env and repeats",
			Server{Env: map[string]string{
				"TOKEN": "${secret:GITHUB_TOKEN}",
				"BOTH":  "${secret:b.key}:${secret:GITHUB_TOKEN}",
				"MIXED": "${env:USER}-${secret:team-key}",
			}},
			[]string{"GITHUB_TOKEN", "b.key", "team-key"},
		},
		{
			"remote",
			Server{
				URL:     "https://api.example.com/mcp?key=${secret:URL_KEY}",
				Headers: map[string]string{"Authorization": "Bearer ${secret:API}"},
				OAuth:   &OAuth{ClientID: "${secret:CLIENT_ID}", ClientSecret: "${secret:CLIENT_SECRET}"},
			},
			[]string{"API", "CLIENT_ID", "CLIENT_SECRET", "URL_KEY"},
		},
		{
			"escaped, unterminated, empty",
			Server{Env: map[string]string{
				"LITERAL": "$${secret:NOT_ONE}",
				"OPEN":    "${secret:NO_BRACE",
				"EMPTY":   "${secret:}",
			}},
			nil,
		},
		{
			"after an escaped one",
			Server{Headers: map[string]string{"X": "$${secret:LIT} ${secret:REAL}"}},
			[]string{"REAL"},
		},
		{
			"not in a command", // a command is never expanded
			Server{Command: []string{"run", "${secret:ARG}"}},
			nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, SecretRefs(tc.s)); diff != "" {
				t.Errorf("SecretRefs (-want +got):\n%s", diff)
			}
		})
	}
}
