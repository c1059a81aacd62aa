package providerschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/tools/txtar"

	"github.com/freecode/freecode/internal/canonjson"
)

var update = flag.Bool("update", false, "rewrite golden files")

// formats are the formats every schema is converted for.
var formats = []Format{Anthropic, OpenAI}

// compileSchema compiles a schema the way the orchestrator's validator
// does (2020-12 unless "$schema" says otherwise, nothing loaded from
// outside), to check what a schema accepts.
func compileSchema(schema json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refusingLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "freecode:///tool-input-schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, errors.New("schemas outside the tool's input schema are not loaded")
}

// schemaCase is one input schema converted in every format.
type schemaCase struct {
	name  string // golden section prefix ("" for a single-schema file)
	input json.RawMessage
}

func loadSchemaCases(t testing.TB, file string) []schemaCase {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(file, ".tools.json") {
		return []schemaCase{{input: data}}
	}
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	var cases []schemaCase
	for _, tool := range list.Tools {
		cases = append(cases, schemaCase{name: tool.Name + "/", input: tool.InputSchema})
	}
	return cases
}

// TestProviderSchemaGolden converts every testdata schema and real server
// tool for every format and compares with golden/<name>.txtar.
func TestProviderSchemaGolden(t *testing.T) {
	conv := New(nil)
	files, _ := filepath.Glob("testdata/schemas/*.json")
	if len(files) < 8 {
		t.Fatalf("found %d testdata schemas, want at least 8", len(files))
	}
	for _, file := range files {
		base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(file), ".json"), ".input")
		t.Run(base, func(t *testing.T) {
			var got txtar.Archive
			for _, tc := range loadSchemaCases(t, file) {
				for _, f := range formats {
					out, problems, err := conv.Convert(f, tc.input)
					if err != nil {
						t.Fatalf("%s%s: %v", tc.name, f, err)
					}
					checkProviderShape(t, tc.name+string(f), out)
					var pretty bytes.Buffer
					if err := json.Indent(&pretty, out, "", "  "); err != nil {
						t.Fatal(err)
					}
					pretty.WriteByte('\n')
					got.Files = append(got.Files,
						txtar.File{Name: tc.name + string(f) + ".json", Data: pretty.Bytes()},
						txtar.File{Name: tc.name + string(f) + ".problems", Data: []byte(strings.Join(append(problems, ""), "\n"))})
				}
			}
			golden := filepath.Join("testdata/schemas/golden", base+".txtar")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, txtar.Format(&got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := txtar.ParseFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(txtar.Format(want)), string(txtar.Format(&got))); diff != "" {
				t.Errorf("%s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

// checkProviderShape checks what both providers require of every converted
// schema: canonical JSON, an object at the top without a top-level union, and
// every $ref pointing into the schema's own $defs (or its root).
func checkProviderShape(t *testing.T, name string, out json.RawMessage) {
	t.Helper()
	canon, err := canonjson.Append(nil, out)
	if err != nil || !bytes.Equal(canon, out) {
		t.Errorf("%s: output is not canonical JSON: %s", name, out)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if m["type"] != "object" {
		t.Errorf("%s: top-level type = %v, want object", name, m["type"])
	}
	if _, ok := m["properties"].(map[string]any); !ok {
		t.Errorf("%s: no top-level properties object", name)
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "$ref", "$schema", "$id", "definitions"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s: top level has %s", name, k)
		}
	}
	if _, err := compileSchema(out); err != nil {
		t.Errorf("%s: converted schema does not compile: %v", name, err)
	}
}

// TestProviderSchemaKeepsProperties: no real schema loses a property or a
// required name on the way to a provider.
func TestProviderSchemaKeepsProperties(t *testing.T) {
	conv := New(nil)
	for _, file := range []string{"testdata/schemas/server-filesystem.tools.json", "testdata/schemas/server-memory.tools.json", "testdata/schemas/server-everything.tools.json", "testdata/schemas/create_issue.input.json"} {
		for _, tc := range loadSchemaCases(t, file) {
			var in map[string]any
			if err := json.Unmarshal(tc.input, &in); err != nil {
				t.Fatal(err)
			}
			for _, f := range formats {
				out, problems, err := conv.Convert(f, tc.input)
				if err != nil {
					t.Fatal(err)
				}
				if len(problems) > 0 {
					t.Errorf("%s%s: problems %q, want none for a plain schema", tc.name, f, problems)
				}
				var got map[string]any
				if err := json.Unmarshal(out, &got); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(schemaTestKeys(in["properties"]), schemaTestKeys(got["properties"])); diff != "" {
					t.Errorf("%s%s properties (-input +output):\n%s", tc.name, f, diff)
				}
				if diff := cmp.Diff(in["required"], got["required"]); diff != "" {
					t.Errorf("%s%s required (-input +output):\n%s", tc.name, f, diff)
				}
			}
		}
	}
}

func schemaTestKeys(v any) []string {
	m, _ := v.(map[string]any)
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestProviderSchemaSameVerdicts: inlining must not change what a schema
// accepts. Each instance gets the same verdict from the original schema and
// from its converted copy (for schemas whose conversion reports nothing lost).
func TestProviderSchemaSameVerdicts(t *testing.T) {
	conv := New(nil)
	tests := []struct {
		file      string
		formats   []Format
		instances []string
	}{
		{"create_issue", formats, []string{
			`{"title":"x"}`,
			`{"title":""}`,
			`{"title":"x","labels":[{"name":"bug","color":"#ff0000"}]}`,
			`{"title":"x","labels":[{"name":"bug","color":"red"}]}`,
			`{"title":"x","labels":[{"color":"#ff0000"}]}`,
			`{"title":"x","assignee":{"login":"ada"}}`,
			`{"title":"x","assignee":{"login":"ada","extra":1}}`,
			`{"title":"x","assignee":{}}`,
			`{"title":"x","tasks":[{"text":"a","subtasks":[{"text":"b"},{}]}]}`,
			`{"title":"x","priority":"urgent"}`,
			`{"title":"x","unknown":true}`,
		}},
		{"definitions07", formats, []string{
			`{"path":[{"x":1,"y":2},{"x":3,"y":4}]}`,
			`{"path":[{"x":1,"y":2}]}`,
			`{"path":[{"x":1},{"x":3,"y":4}]}`,
			`{"path":[{"x":1,"y":2},{"x":3,"y":4}],"pair":["a",{"x":1,"y":2}]}`,
			`{"path":[{"x":1,"y":2},{"x":3,"y":4}],"pair":["a",{"x":1,"y":2},3]}`,
			`{"path":[{"x":1,"y":2},{"x":3,"y":4}],"style":"dotted"}`,
			`{"path":[{"x":1,"y":2},{"x":3,"y":4}],"style":"solid","point":{"x":0,"y":0,"z":0}}`,
		}},
		{"defs2020", formats, []string{
			`{"query":{"text":"a"}}`,
			`{"query":{}}`,
			`{"query":{"text":"a","order":"up"}}`,
			`{"query":{"text":"a"},"sort":"asc","page":null}`,
			`{"query":{"text":"a"},"sort":"down"}`,
			`{"query":{"text":"a"},"page":0}`,
			`{"query":{"text":"a"},"filters":[{"from":1,"to":2},{"to":3}]}`,
			`{"query":{"text":"a"},"filters":[{"from":1},{"from":1},{"from":1}]}`,
		}},
		{"tree", []Format{Anthropic}, []string{
			`{"root":{"name":"a","children":[{"name":"b","children":[{"name":"c","children":[{"name":"d","children":[{}]}]}]}]}}`,
			`{"root":{"name":"a","children":[{"name":"b","children":[{"name":"c","children":[{"name":"d"}]}]}]}}`,
			`{"root":{}}`,
		}},
	}
	for _, tc := range tests {
		input, err := os.ReadFile("testdata/schemas/" + tc.file + ".input.json")
		if err != nil {
			t.Fatal(err)
		}
		orig, err := compileSchema(input)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range tc.formats {
			out, _, err := conv.Convert(f, input)
			if err != nil {
				t.Fatal(err)
			}
			conv, err := compileSchema(out)
			if err != nil {
				t.Fatalf("%s %s: %v", tc.file, f, err)
			}
			for _, inst := range tc.instances {
				v := schemaTestInstance(t, inst)
				want, got := orig.Validate(v) == nil, conv.Validate(v) == nil
				if want != got {
					t.Errorf("%s %s: %s: original says valid=%v, converted says valid=%v", tc.file, f, inst, want, got)
				}
			}
		}
	}
}

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

func TestProviderSchemaEdgeCases(t *testing.T) {
	conv := New(nil)
	tests := []struct {
		name      string
		f         Format
		input     string
		want      string   // converted schema, canonical
		problems  []string // substrings, one per problem, in order
		wantError string
	}{
		{name: "no schema", f: OpenAI, input: ``,
			want: `{"properties":{},"type":"object"}`, problems: []string{"no input schema"}},
		{name: "null schema", f: Anthropic, input: `null`,
			want: `{"properties":{},"type":"object"}`, problems: []string{"no input schema"}},
		{name: "empty object schema is reported", f: Anthropic, input: `{}`,
			want: `{"properties":{},"type":"object"}`, problems: []string{"schema is empty"}},
		{name: "true schema", f: OpenAI, input: `true`,
			want: `{"properties":{},"type":"object"}`, problems: []string{"schema is empty"}},
		{name: "object without properties keeps its keywords", f: OpenAI, input: `{"type":"object","additionalProperties":{"type":"string"}}`,
			want: `{"additionalProperties":{"type":"string"},"properties":{},"type":"object"}`},
		{name: "properties without type", f: Anthropic, input: `{"properties":{"a":{"type":"string"}}}`,
			want: `{"properties":{"a":{"type":"string"}},"type":"object"}`},
		{name: "keywords kept", f: OpenAI,
			input: `{"type":"object","$comment":"x","properties":{"n":{"type":"integer","minimum":1,"maximum":9,"default":3,"description":"d","format":"int32","const":3,"x-vendor":{"$ref":"not a schema"}}}}`,
			want:  `{"properties":{"n":{"const":3,"default":3,"description":"d","format":"int32","maximum":9,"minimum":1,"type":"integer","x-vendor":{"$ref":"not a schema"}}},"type":"object"}`},
		{name: "a default that looks like a schema is not converted", f: Anthropic,
			input: `{"type":"object","properties":{"o":{"type":"object","default":{"allOf":[1],"$ref":"#/x"}}}}`,
			want:  `{"properties":{"o":{"default":{"$ref":"#/x","allOf":[1]},"type":"object"}},"type":"object"}`},
		{name: "property named like a keyword", f: Anthropic,
			input: `{"type":"object","properties":{"$ref":{"type":"string"},"definitions":{"type":"string"}}}`,
			want:  `{"properties":{"$ref":{"type":"string"},"definitions":{"type":"string"}},"type":"object"}`},
		{name: "nested oneOf becomes anyOf", f: Anthropic,
			input:    `{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"integer"}]}}}`,
			want:     `{"properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}},"type":"object"}`,
			problems: []string{"/properties/v: oneOf sent as anyOf"}},
		{name: "root recursion anthropic", f: Anthropic,
			input: `{"type":"object","properties":{"name":{"type":"string"},"next":{"$ref":"#"}}}`,
			want:  `{"properties":{"name":{"type":"string"},"next":{"$ref":"#"}},"type":"object"}`},
		{name: "root recursion openai", f: OpenAI,
			input:    `{"type":"object","properties":{"next":{"$ref":"#"}}}`,
			want:     `{"properties":{"next":{"properties":{"next":{"properties":{"next":{"description":"(A nested root; its deeper levels are not described here.)","type":"object"}},"type":"object"}},"type":"object"}},"type":"object"}`,
			problems: []string{"/properties/next/properties/next/properties/next: recursive $ref \"#\" inlined 3 levels deep"}},
		{name: "mutual recursion anthropic", f: Anthropic,
			input: `{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"object","properties":{"b":{"$ref":"#/$defs/b"}}},"b":{"type":"array","items":{"$ref":"#/$defs/a"}}}}`,
			want:  `{"$defs":{"a":{"properties":{"b":{"items":{"$ref":"#/$defs/a"},"type":"array"}},"type":"object"}},"properties":{"a":{"$ref":"#/$defs/a"}},"type":"object"}`},
		{name: "2019-09 recursiveRef", f: Anthropic,
			input:    `{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"type":"object","properties":{"sub":{"$recursiveRef":"#"}}}`,
			want:     `{"properties":{"sub":{"$ref":"#"}},"type":"object"}`,
			problems: []string{`/properties/sub: $recursiveRef "#" resolved statically`}},
		{name: "top-level ref", f: OpenAI,
			input: `{"$ref":"#/definitions/args","definitions":{"args":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}}`,
			want:  `{"properties":{"q":{"type":"string"}},"required":["q"],"type":"object"}`},
		{name: "allOf type conflict", f: Anthropic,
			input:    `{"type":"object","properties":{"x":{"allOf":[{"type":"string"},{"type":"integer"}]}}}`,
			want:     `{"properties":{"x":{"type":"string"}},"type":"object"}`,
			problems: []string{"/properties/x/allOf/1: allOf branches want conflicting types string and integer"}},
		{name: "pointer escapes", f: Anthropic,
			input: `{"type":"object","properties":{"x":{"$ref":"#/$defs/a~1b%20c"}},"$defs":{"a/b c":{"type":"string"}}}`,
			want:  `{"properties":{"x":{"type":"string"}},"type":"object"}`},
		{name: "remote ref", f: Anthropic, input: `{"type":"object","properties":{"x":{"$ref":"https://example.com/s.json"}}}`,
			wantError: "points outside the schema"},
		{name: "file ref", f: OpenAI, input: `{"type":"object","properties":{"x":{"$ref":"file:///etc/passwd"}}}`,
			wantError: "points outside the schema"},
		{name: "relative ref", f: OpenAI, input: `{"type":"object","properties":{"x":{"$ref":"other.json#/a"}}}`,
			wantError: "points outside the schema"},
		{name: "dangling ref", f: OpenAI, input: `{"type":"object","properties":{"x":{"$ref":"#/$defs/missing"}}}`,
			wantError: `no "/$defs/missing" in the schema`},
		{name: "unknown anchor", f: OpenAI, input: `{"type":"object","properties":{"x":{"$ref":"#nowhere"}}}`,
			wantError: `no anchor "nowhere"`},
		{name: "false schema", f: OpenAI, input: `false`, wantError: "accepts no arguments"},
		{name: "array schema", f: OpenAI, input: `[]`, wantError: "JSON array, not an object"},
		{name: "string type", f: OpenAI, input: `{"type":"string"}`, wantError: "always an object"},
		{name: "bad JSON", f: OpenAI, input: `{"type":`, wantError: "not JSON"},
		{name: "type not a name", f: Anthropic, input: `{"type":0}`, wantError: `want "object"`},
		{name: "nullable object narrowed", f: OpenAI, input: `{"type":["object","null"],"properties":{}}`,
			want: `{"properties":{},"type":"object"}`, problems: []string{"/type: types [object null] narrowed to object"}},
		{name: "unknown format", f: "gemini", input: `{}`, wantError: "unknown tool definition format"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, problems, err := conv.Convert(tc.f, json.RawMessage(tc.input))
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("error = %v, want one containing %q (output %s)", err, tc.wantError, out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(out)); diff != "" {
				t.Errorf("schema (-want +got):\n%s", diff)
			}
			if len(problems) != len(tc.problems) {
				t.Fatalf("problems = %q, want %d like %q", problems, len(tc.problems), tc.problems)
			}
			for i, p := range tc.problems {
				if !strings.Contains(problems[i], p) {
					t.Errorf("problem %d = %q, want one containing %q", i, problems[i], p)
				}
			}
		})
	}
}

// BenchmarkProviderSchema: a conversion (memo bypassed) and a memo hit.
func BenchmarkProviderSchema(b *testing.B) {
	conv := New(nil)
	input, err := os.ReadFile("testdata/schemas/create_issue.input.json")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("convert", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := convertSchema(OpenAI, input); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("memo", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := conv.Convert(OpenAI, input); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestProviderSchemaMemo: a memoized result equals a fresh conversion and
// its problems are the caller's own copy.
func TestProviderSchemaMemo(t *testing.T) {
	conv := New(nil)
	input := json.RawMessage(`{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"integer"}]}}}`)
	for range 2 {
		got, problems, err := conv.Convert(Anthropic, input)
		want, wantProblems, wantErr := convertSchema(Anthropic, input)
		if err != nil || wantErr != nil {
			t.Fatal(err, wantErr)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("memoized schema (-fresh +memo):\n%s", diff)
		}
		if diff := cmp.Diff(wantProblems, problems); diff != "" {
			t.Errorf("memoized problems (-fresh +memo):\n%s", diff)
		}
		problems[0] = "changed by the caller"
	}
	if _, _, err := conv.Convert(OpenAI, json.RawMessage(`{"$ref":"http://x/y"}`)); err == nil {
		t.Error("a memoized error was lost")
	}
	if _, _, err := conv.Convert(OpenAI, json.RawMessage(`{"$ref":"http://x/y"}`)); err == nil {
		t.Error("a memoized error was lost the second time")
	}
}

// FuzzProviderSchema: any input gives an error or a usable object schema,
// never a panic.
func FuzzProviderSchema(f *testing.F) {
	files, _ := filepath.Glob("testdata/schemas/*.input.json")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{`{"$ref":5}`, `{"$ref":"#"}`, `{"allOf":[{"$ref":"#"}]}`, `{"anyOf":[true,false,{"type":"string"}]}`,
		`{"items":[{"$ref":"#/items/0"}]}`, `{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, `{"type":["object","null"],"oneOf":[{"required":["a"]},{"required":["b"]}],"anyOf":[{}]}`, `{"type":0}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		for _, format := range formats {
			out, _, err := convertSchema(format, input)
			if err != nil {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal(out, &m); err != nil {
				t.Fatalf("%s: output is not a JSON object: %s", format, out)
			}
			if m["type"] != "object" {
				t.Fatalf("%s: output type %v, want object: %s", format, m["type"], out)
			}
		}
	})
}
