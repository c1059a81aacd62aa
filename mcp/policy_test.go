package mcp

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/freecode/freecode/config"
)

// TestURLPolicyAgreesWithConfig: the config accepts a remote URL exactly
// when the dialer does, *.localhost included: both apply the one policy.
func TestURLPolicyAgreesWithConfig(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"http://localhost:3000/mcp", true},
		{"http://app.localhost:3000/mcp", true},
		{"http://APP.localhost.:3000/mcp", true},
		{"http://127.0.0.1:3000/mcp", true},
		{"http://[::1]:3000/mcp", true},
		{"https://mcp.example.com/mcp", true},
		{"http://localhost.evil.example/mcp", false},
		{"http://mcp.example.com/mcp", false},
		{"http://2130706433/", false},
		{"https://0x7f.1/", false},
		{"https://169.254.169.254/", false},
		{"https://[fd20:ce::254]/", false},
		{"https://168.63.129.16/", false},
		{"https://100.100.100.200/", false},
		{"https://metadata.tencentyun.com/", false},
		{"ws://localhost/", false},
	} {
		cfgErr := config.CheckURL(tc.url)
		_, dialErr := newRemoteClient(remoteServer(tc.url, config.TransportAuto), slog.New(slog.DiscardHandler))
		if (cfgErr == nil) != tc.ok || (dialErr == nil) != tc.ok {
			t.Errorf("%s: config says %v, the dialer %v; want both ok=%v", tc.url, cfgErr, dialErr, tc.ok)
		}
		if dialErr != nil && !errors.Is(dialErr, ErrURLRefused) {
			t.Errorf("%s: the dialer's error %v is not ErrURLRefused", tc.url, dialErr)
		}
	}
}
