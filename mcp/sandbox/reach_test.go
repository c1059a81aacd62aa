package sandbox

import (
	"testing"

	"github.com/freecode/freecode/config"
)

func TestReaches(t *testing.T) {
	domains := []string{"api.example.com", "*.cdn.example.org", "ws.example.net:8443", "127.0.0.1:5173"}
	for _, tc := range []struct {
		origin string
		want   bool
	}{
		{"https://api.example.com", true},
		{"wss://api.example.com", true},
		{"https://api.example.com:8443", false}, // another port
		{"https://evil.example.com", false},
		{"https://a.cdn.example.org", true},
		{"https://cdn.example.org", false}, // "*." is the names below it
		{"https://*.cdn.example.org", true},
		{"https://*.example.org", false}, // wider than the list
		{"wss://ws.example.net:8443", true},
		{"wss://ws.example.net", false},
		{"http://127.0.0.1:5173", true},
		{"http://localhost:5173", false}, // the address is listed, not the name
		{"https://[::1]", false},
	} {
		if got, why := Reaches(config.NetworkDomains, domains, tc.origin); got != tc.want {
			t.Errorf("Reaches(%s) = %v (%s), want %v", tc.origin, got, why, tc.want)
		}
	}
	if ok, _ := Reaches(config.NetworkAll, nil, "https://anything.example"); !ok {
		t.Error(`"all" does not reach an origin`)
	}
	if ok, why := Reaches(config.NetworkNone, nil, "https://api.example.com"); ok || why == "" {
		t.Errorf(`"none" reaches an origin (%s)`, why)
	}
	if ok, why := Reaches(config.NetworkDomains, []string{}, "https://api.example.com"); ok || why != "outside the server's sandbox, whose allow-list is empty" {
		t.Errorf("an empty list: %v %s", ok, why)
	}
}
