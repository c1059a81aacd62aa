package orchestrator

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// labelsSchema is a realistic tool schema: $defs, $ref, nested arrays of
// objects, an enum, bounds and a pattern.
const labelsSchema = `{
  "type": "object",
  "$defs": {
    "label": {
      "type": "object",
      "properties": {
        "name": {"type": "string", "minLength": 1},
        "color": {"type": "string", "pattern": "^#[0-9a-fA-F]{6}$"}
      },
      "required": ["name"],
      "additionalProperties": false
    }
  },
  "properties": {
    "title": {"type": "string"},
    "count": {"type": "integer", "minimum": 1},
    "labels": {"type": "array", "items": {"$ref": "#/$defs/label"}},
    "priority": {"enum": ["low", "medium", "high"]},
    "tags": {"type": "array", "contains": {"const": "triage"}},
    "target": {"anyOf": [{"type": "string"}, {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}]}
  },
  "required": ["title"],
  "additionalProperties": false
}`

func TestValidate(t *testing.T) {
	v, err := NewValidator(json.RawMessage(labelsSchema))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args string
		want []FieldError
	}{
		{name: "valid", args: `{"title":"t","count":2,"labels":[{"name":"bug","color":"#ff0000"}],"priority":"low","target":{"id":3}}`},
		{name: "every error with its path", args: `{"count":"x","labels":[{"color":"red"},{"name":""}]}`, want: []FieldError{
			{Path: "", Message: `missing required property "title"`},
			{Path: "/count", Message: "want integer, got string"},
			{Path: "/labels/0", Message: `missing required property "name"`},
			{Path: "/labels/0/color", Message: `'red' does not match pattern '^#[0-9a-fA-F]{6}$'`},
			{Path: "/labels/1/name", Message: "minLength: got 0, want 1"},
		}},
		{name: "enum and bounds", args: `{"title":"t","count":0,"priority":"urgent"}`, want: []FieldError{
			{Path: "/count", Message: "minimum: got 0, want 1"},
			{Path: "/priority", Message: "value must be one of 'low', 'medium', 'high'"},
		}},
		{name: "unknown properties", args: `{"title":"t","labels":[{"name":"a","size":1}],"extra":true}`, want: []FieldError{
			{Path: "", Message: `unknown property "extra" (no other properties are allowed)`},
			{Path: "/labels/0", Message: `unknown property "size" (no other properties are allowed)`},
		}},
		{name: "no alternative matches", args: `{"title":"t","target":{"id":"x"}}`, want: []FieldError{
			{Path: "/target", Message: "matches none of the 2 allowed alternatives (#1 want string, got object; #2 /id: want integer, got string)"},
		}},
		{name: "contains is one error, not one per item", args: `{"title":"t","tags":["a","b"]}`, want: []FieldError{
			{Path: "/tags", Message: "no items match contains schema"},
		}},
		{name: "wrong top-level type", args: `[]`, want: []FieldError{
			{Path: "", Message: "want object, got array"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Validate(schemaTestInstance(t, tc.args))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate = %v (%T), want a *ValidationError", err, err)
			}
			if diff := cmp.Diff(tc.want, ve.Errors); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			// The raw JSON form gives the same verdict.
			if diff := cmp.Diff(err.Error(), fmt.Sprint(v.Validate(json.RawMessage(tc.args)))); diff != "" {
				t.Errorf("Validate(json.RawMessage) differs (-decoded +raw):\n%s", diff)
			}
		})
	}
}

func TestValidationErrorText(t *testing.T) {
	e := &ValidationError{Errors: []FieldError{
		{Path: "", Message: `missing required property "title"`},
		{Path: "/labels/0", Message: `missing required property "name"`},
		{Path: "/count", Message: "want integer, got string"},
	}}
	want := `invalid arguments: /: missing required property "title"; /labels/0: missing required property "name"; /count: want integer, got string`
	if diff := cmp.Diff(want, e.Error()); diff != "" {
		t.Errorf("Error() (-want +got):\n%s", diff)
	}
}

func TestValidateDrafts(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		valid   []string
		invalid []string
	}{
		{name: "draft-07 from $schema: tuple items, additionalItems, definitions",
			schema: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{
				"pair":{"type":"array","items":[{"type":"string"},{"$ref":"#/definitions/n"}],"additionalItems":false}},
				"definitions":{"n":{"type":"number"}}}`,
			valid:   []string{`{"pair":["a",1]}`, `{}`},
			invalid: []string{`{"pair":["a","b"]}`, `{"pair":["a",1,2]}`}},
		{name: "draft-04: boolean exclusiveMinimum",
			schema:  `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"number","minimum":0,"exclusiveMinimum":true}}}`,
			valid:   []string{`{"n":0.5}`},
			invalid: []string{`{"n":0}`}},
		{name: "default is 2020-12: prefixItems and $defs",
			schema:  `{"type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"string"}],"items":false},"d":{"$ref":"#/$defs/d"}},"$defs":{"d":{"const":1}}}`,
			valid:   []string{`{"p":["a"],"d":1}`},
			invalid: []string{`{"p":["a","b"]}`, `{"p":[1]}`, `{"d":2}`}},
		{name: "absent schema accepts any object", schema: ``,
			valid: []string{`{}`, `{"anything":[1,2]}`}, invalid: []string{`"text"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := NewValidator(json.RawMessage(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.valid {
				if err := v.Validate(schemaTestInstance(t, s)); err != nil {
					t.Errorf("Validate(%s) = %v, want valid", s, err)
				}
			}
			for _, s := range tc.invalid {
				if err := v.Validate(schemaTestInstance(t, s)); err == nil {
					t.Errorf("Validate(%s) = nil, want an error", s)
				}
			}
		})
	}
}

// TestValidatorBlocksOutsideRefs: a schema that refers outside itself does
// not compile, and nothing is fetched or read, even when the target exists
// and is a valid schema.
func TestValidatorBlocksOutsideRefs(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/schema+json")
		fmt.Fprint(w, `{"type":"string"}`)
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(file, []byte(`{"type":"string"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, schema string }{
		{"https", `{"type":"object","properties":{"x":{"$ref":"https://example.com/s.json"}}}`},
		{"loopback http", `{"type":"object","properties":{"x":{"$ref":"` + srv.URL + `/s.json"}}}`},
		{"file URL", `{"type":"object","properties":{"x":{"$ref":"file://` + file + `"}}}`},
		{"/etc/passwd", `{"type":"object","properties":{"x":{"$ref":"file:///etc/passwd"}}}`},
		{"relative to an http $id", `{"$id":"` + srv.URL + `/root.json","type":"object","properties":{"x":{"$ref":"s.json"}}}`},
		{"relative to a file $id", `{"$id":"file://` + filepath.Dir(file) + `/root.json","type":"object","properties":{"x":{"$ref":"s.json"}}}`},
		{"relative without $id", `{"type":"object","properties":{"x":{"$ref":"s.json"}}}`},
		{"custom meta-schema", `{"$schema":"` + srv.URL + `/meta.json","type":"object"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := NewValidator(json.RawMessage(tc.schema))
			if err == nil {
				t.Fatalf("NewValidator compiled %s (validator %v), want an error", tc.schema, v)
			}
			if !errors.Is(err, errRefNotLoaded) && !strings.Contains(err.Error(), "not loaded") {
				t.Errorf("error = %v, want the refusal", err)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the HTTP server got %d requests, want 0", n)
	}
}

// TestValidatorRealServers compiles every captured real tool schema
// (draft-07, from the TS SDK) and checks that empty arguments are rejected
// exactly for the required properties, at the root.
func TestValidatorRealServers(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(capturedDir, "*.tools.json"))
	if len(files) < 3 {
		t.Fatalf("found %d captured servers, want 3", len(files))
	}
	n := 0
	for _, file := range files {
		for _, tc := range loadCapturedTools(t, file) {
			n++
			input := tc.InputSchema.(json.RawMessage)
			v, err := NewValidator(input)
			if err != nil {
				t.Errorf("%s %s: %v", file, tc.Name, err)
				continue
			}
			var schema struct{ Required []string }
			if err := json.Unmarshal(input, &schema); err != nil {
				t.Fatal(err)
			}
			var want []FieldError
			for _, r := range schema.Required {
				want = append(want, FieldError{Path: "", Message: fmt.Sprintf("missing required property %q", r)})
			}
			slices.SortFunc(want, func(a, b FieldError) int { return strings.Compare(a.Message, b.Message) })
			var got []FieldError
			if err := v.Validate(map[string]any{}); err != nil {
				var ve *ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("%s: %v", tc.Name, err)
				}
				got = ve.Errors
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %s: Validate({}) (-want +got):\n%s", file, tc.Name, diff)
			}
		}
	}
	if n != 14+9+13 {
		t.Errorf("checked %d tools, want 36", n)
	}
}

func TestNewValidatorErrors(t *testing.T) {
	for _, schema := range []string{`{"type":`, `{"type":"strng"}`, `{"minimum":"1"}`} {
		if _, err := NewValidator(json.RawMessage(schema)); err == nil {
			t.Errorf("NewValidator(%s) succeeded, want an error", schema)
		}
	}
}

func TestValidateConcurrent(t *testing.T) {
	v, err := NewValidator(json.RawMessage(labelsSchema))
	if err != nil {
		t.Fatal(err)
	}
	good := schemaTestInstance(t, `{"title":"t","labels":[{"name":"a"}]}`)
	bad := schemaTestInstance(t, `{"labels":[{}]}`)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 50 {
				if i%2 == 0 {
					if err := v.Validate(good); err != nil {
						t.Error(err)
						return
					}
				} else if err := v.Validate(bad); err == nil {
					t.Error("bad arguments validated")
					return
				}
			}
		})
	}
	wg.Wait()
}

// benchArgs are create_issue arguments as the orchestrator decodes them
// (json.Number numbers).
const benchArgs = `{"title":"Crash on start","body":"Stack trace attached.","labels":[{"name":"bug","color":"#d73a4a"},{"name":"p1"}],
  "assignee":{"login":"ada"},"tasks":[{"text":"reproduce","done":true},{"text":"fix","subtasks":[{"text":"write test"},{"text":"patch"}]}],"priority":"high"}`

func benchValidator(b *testing.B) *Validator {
	schema, err := os.ReadFile(filepath.Join(capturedDir, "create_issue.input.json"))
	if err != nil {
		b.Fatal(err)
	}
	v, err := NewValidator(schema)
	if err != nil {
		b.Fatal(err)
	}
	return v
}

// BenchmarkValidate: the per-call check on a nested schema ($refs, arrays of
// objects, patterns, enum) and on a flat real one (server-filesystem's
// read_text_file, draft-07).
func BenchmarkValidate(b *testing.B) {
	b.Run("create_issue", func(b *testing.B) {
		v := benchValidator(b)
		args := schemaTestInstance(b, benchArgs)
		b.ReportAllocs()
		for b.Loop() {
			if err := v.Validate(args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read_text_file", func(b *testing.B) {
		var schema json.RawMessage
		for _, tc := range loadCapturedTools(b, filepath.Join(capturedDir, "server-filesystem.tools.json")) {
			if tc.Name == "read_text_file" {
				schema = tc.InputSchema.(json.RawMessage)
			}
		}
		v, err := NewValidator(schema)
		if err != nil {
			b.Fatal(err)
		}
		args := schemaTestInstance(b, `{"path":"/tmp/notes.txt","head":20}`)
		b.ReportAllocs()
		for b.Loop() {
			if err := v.Validate(args); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkValidateInvalid(b *testing.B) {
	v := benchValidator(b)
	args := schemaTestInstance(b, `{"labels":[{"color":"red"}],"priority":"urgent","tasks":[{}]}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(args); err == nil {
			b.Fatal("invalid arguments validated")
		}
	}
}

func BenchmarkNewValidator(b *testing.B) {
	schema, err := os.ReadFile(filepath.Join(capturedDir, "create_issue.input.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewValidator(schema); err != nil {
			b.Fatal(err)
		}
	}
}

// schemaTestInstance decodes an instance as the orchestrator decodes
// arguments, numbers kept as written.
func schemaTestInstance(t testing.TB, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
