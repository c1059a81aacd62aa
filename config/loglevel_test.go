package config

import (
	"errors"
	"testing"
)

func TestLogLevel(t *testing.T) {
	const wantErr = "c.json:1:22: mcp.logLevel: want an MCP log level: debug, info, notice, warning, error, critical, alert, emergency"
	tests := []struct {
		value   string
		want    string
		wantErr string
	}{
		{`"debug"`, "debug", ""},
		{`"warning"`, "warning", ""},
		{`"emergency"`, "emergency", ""},
		{"null", DefaultLogLevel, ""},
		{`"warn"`, "", wantErr},
		{`"INFO"`, "", wantErr},
		{`3`, "", wantErr},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			cfg, err := Parse("c.json", []byte(`{"mcp": {"logLevel": `+tc.value+`}}`))
			if tc.wantErr != "" {
				var ve *ValidationError
				if !errors.As(err, &ve) || err.Error() != tc.wantErr {
					t.Fatalf("Parse error = %v, want a *ValidationError %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.MCP.LogLevel != tc.want {
				t.Errorf("LogLevel = %q, want %q", cfg.MCP.LogLevel, tc.want)
			}
		})
	}
}

// An entry without protocolVersion negotiates, and AddServer writes none;
// one that pins a version keeps it; a version that is no date is refused.
func TestProtocolVersionPinOrNegotiate(t *testing.T) {
	cfg, err := Parse("c.json", []byte(`{"mcp": {"servers": [
		{"name": "a", "command": "x"},
		{"name": "b", "command": "x", "protocolVersion": "2024-11-05"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := cfg.Server("a"); a.ProtocolVersion != "" {
		t.Errorf("a: protocolVersion = %q, want none (negotiate)", a.ProtocolVersion)
	}
	if b, _ := cfg.Server("b"); b.ProtocolVersion != "2024-11-05" {
		t.Errorf("b: protocolVersion = %q, want the pin", b.ProtocolVersion)
	}
	if f := toFile(Server{Name: "a", Type: TypeLocal, Command: []string{"x"}, Enabled: true}.WithDefaults()); f.ProtocolVersion != "" {
		t.Errorf("AddServer would write protocolVersion %q for an entry that pins none", f.ProtocolVersion)
	}
	_, err = Parse("c.json", []byte(`{"mcp": {"servers": [{"name": "a", "command": "x", "protocolVersion": "latest"}]}}`))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Errorf("protocolVersion \"latest\": error %v, want a *ValidationError", err)
	}
}
