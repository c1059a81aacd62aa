package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
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
			want: `{"model":"m","provider":{"k":"sk-SECRET"}, "mcp": {
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
