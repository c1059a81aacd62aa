package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailscale/hujson"
)

// TestAddServerLayout checks that a new entry is indented like the file
// around it, whatever the file's style, and nothing else moves.
func TestAddServerLayout(t *testing.T) {
	s := Server{Name: "x", Type: TypeLocal, Enabled: true, Command: []string{"x", "--flag"}}
	tests := []struct{ name, file, want string }{
		{
			name: "tabs",
			file: "{\n\t\"model\": \"m\",\n\t\"mcp\": {\n\t\t\"servers\": [\n\t\t\t{\"name\": \"a\", \"command\": \"a\"}\n\t\t]\n\t}\n}\n",
			want: "{\n\t\"model\": \"m\",\n\t\"mcp\": {\n\t\t\"servers\": [\n\t\t\t{\"name\": \"a\", \"command\": \"a\"},\n" +
				"\t\t\t{\n\t\t\t\t\"name\": \"x\",\n\t\t\t\t\"type\": \"local\",\n\t\t\t\t\"command\": [\"x\", \"--flag\"]\n\t\t\t}\n\t\t]\n\t}\n}\n",
		},
		{
			name: "one line",
			file: `{"model":"m","provider":{"k":"sk-SECRET"}}`,
			want: `{"model":"m","provider":{"k":"sk-SECRET"},"mcp": {
  "servers": [
    {
      "name": "x",
      "type": "local",
      "command": ["x", "--flag"]
    }
  ]
}}`,
		},
		{
			name: "empty mcp and null servers",
			file: "{\n    \"mcp\": {\"servers\": null}\n}\n",
			want: "{\n    \"mcp\": {\"servers\": [\n        {\n            \"name\": \"x\",\n            \"type\": \"local\",\n            \"command\": [\"x\", \"--flag\"]\n        }\n    ]}\n}\n",
		},
		{
			name: "comment after the last member",
			file: "{\n  \"model\": \"m\" // keep me here\n}\n",
			want: "{\n  \"model\": \"m\", // keep me here\n  \"mcp\": {\n    \"servers\": [\n      {\n        \"name\": \"x\",\n        \"type\": \"local\",\n        \"command\": [\"x\", \"--flag\"]\n      }\n    ]\n  }\n}\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, tc.file, 0o600)
			if err := AddServer(path, s); err != nil {
				t.Fatal(err)
			}
			got := readFile(t, path)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("file (-want +got):\n%s\ngot:\n%s", diff, got)
			}
			if _, err := Load(path); err != nil {
				t.Errorf("the edited file does not load: %v", err)
			}
		})
	}
}

// Values fn does not touch keep their bytes even when their layout is odd:
// a closing bracket on the last element's line, an empty "[ ]".
func TestUpdateFileLeavesUntouchedValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	orig := "{\"p\": [1,\n2], \"q\": {\"a\": 1,\n  \"b\": 2}, \"e\": [ ], \"o\": { }}\n"
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	err := UpdateFile(path, func(root *hujson.Value) error {
		return root.Patch([]byte(`[{"op":"add","path":"/z","value":true}]`))
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"p\": [1,\n2], \"q\": {\"a\": 1,\n  \"b\": 2}, \"e\": [ ], \"o\": { }, \"z\": true}\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
