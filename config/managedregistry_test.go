package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The registry block: the last file that sets a URL fixes it and is named
// as where it comes from; a URL FreeCode may not dial is an error at its
// key and fixes nothing.
func TestLoadManagedRegistry(t *testing.T) {
	d := ManagedDropInsName + "/"
	for _, tc := range []struct {
		name     string
		files    map[string]string
		want     ManagedRegistry
		problems []string
	}{
		{
			name:  "none",
			files: map[string]string{ManagedSettingsName: `{}`},
		},
		{
			name:  "set",
			files: map[string]string{ManagedSettingsName: `{"registry": {"url": "https://registry.corp.example/"}}`},
			want:  ManagedRegistry{URL: "https://registry.corp.example", Path: ManagedSettingsName},
		},
		{
			name: "a later file's wins",
			files: map[string]string{
				ManagedSettingsName:     `{"registry": {"url": "https://registry.corp.example"}}`,
				d + "10-mirror.json":    `{"registry": {"url": "https://mirror.corp.example/mcp"}}`,
				d + "20-telemetry.json": `{"telemetry": {"enabled": false}}`,
			},
			want: ManagedRegistry{URL: "https://mirror.corp.example/mcp", Path: d + "10-mirror.json"},
		},
		{
			name: "bad values keep an earlier file's",
			files: map[string]string{
				ManagedSettingsName: `{"registry": {"url": "https://registry.corp.example"}}`,
				d + "10-bad.json":   `{"registry": {"url": "http://registry.corp.example", "mirror": true}}`,
			},
			want: ManagedRegistry{URL: "https://registry.corp.example", Path: ManagedSettingsName},
			problems: []string{
				`managed-settings.d/10-bad.json:1:22: registry.url: ` + httpErr(t, "http://registry.corp.example"),
				`managed-settings.d/10-bad.json:1:54: registry.mirror: unknown key "mirror" is ignored (warning)`,
			},
		},
		{
			name:     "not a string",
			files:    map[string]string{ManagedSettingsName: `{"registry": {"url": 1}}`},
			problems: []string{`managed-settings.json:1:22: registry.url: want the URL of an MCP Registry, such as "https://registry.modelcontextprotocol.io"`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeManaged(t, tc.files)
			m := mustLoadManaged(t, dir)
			want := tc.want
			if want.Path != "" {
				want.Path = dir + "/" + want.Path
			}
			if diff := cmp.Diff(want, m.Registry); diff != "" {
				t.Errorf("registry (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.problems, problems(dir, m)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// httpErr is what CheckRegistryURL says of raw.
func httpErr(t *testing.T, raw string) string {
	t.Helper()
	err := CheckRegistryURL(raw)
	if err == nil {
		t.Fatalf("CheckRegistryURL(%q) = nil", raw)
	}
	return err.Error()
}
