package canonjson

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCanonical(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"keys sorted", `{"b":1,"a":{"d":[3, 2],"c":null}}`, `{"a":{"c":null,"d":[3,2]},"b":1}`},
		{"whitespace", " {\n\t\"a\" : [ true , false ] ,\"b\":\"x\" } ", `{"a":[true,false],"b":"x"}`},
		{"numbers as written", `[1.0,1e3,-0,12345678901234567890]`, `[1.0,1e3,-0,12345678901234567890]`},
		{"no HTML escaping", `"<a&b>"`, `"<a&b>"`},
		{"escapes normalized", `"\u0041\/\u00e9\n\u0001"`, "\"A/\u00e9\\n\\u0001\""},
		{"line separators escaped", "\"a\u2028b\"", `"a\u2028b"`},
		{"invalid UTF-8 replaced", "\"a\xffb\"", "\"a\uFFFDb\""},
		{"duplicate keys keep the last", `{"a":1,"b":2,"a":3}`, `{"a":3,"b":2}`},
		{"escaped keys sort by their value", `{"\u0062":1,"a":2}`, `{"a":2,"b":1}`},
		{"empty containers", `{"a":{},"b":[]}`, `{"a":{},"b":[]}`},
		{"scalar", ` null `, `null`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Append(nil, []byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("Append(%s) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestCanonicalErrors(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":}`, `[1,]`, strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2)} {
		if got, err := Append([]byte("x"), []byte(in)); err == nil {
			t.Errorf("Append(%.20q) = %s, want an error", in, got)
		} else if string(got) != "x" {
			t.Errorf("Append(%.20q) on error returned %q, want dst unchanged", in, got)
		}
	}
}

// encodingJSON is the reference: decode, then marshal with sorted map keys
// and no HTML escaping.
func encodingJSON(t testing.TB, in []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(in))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// TestCanonicalMatchesEncodingJSON checks real servers' schemas against the
// reference encoder.
func TestCanonicalMatchesEncodingJSON(t *testing.T) {
	files, _ := filepath.Glob("../providerschema/testdata/schemas/*.json")
	files = append(files, "../../defscache/testdata/anthropic.golden.json")
	for _, name := range files {
		in, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Append(nil, in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(string(encodingJSON(t, in)), string(got)); diff != "" {
			t.Errorf("%s (-encoding/json +Canonical):\n%s", name, diff)
		}
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"b":[1,{"z":"\u2028","a":"<"}],"a":null}`, `"\ud800"`, `[1e400]`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := Append(nil, in)
		if !json.Valid(in) {
			if err == nil {
				t.Fatalf("Canonical accepted invalid JSON %q", in)
			}
			return
		}
		if err != nil {
			return // too deep
		}
		var v any
		if json.Unmarshal(in, &v) != nil {
			return // valid syntax encoding/json still refuses (e.g. 1e400 into float64)
		}
		if want := encodingJSON(t, in); !bytes.Equal(want, got) {
			t.Fatalf("Append(%q) = %q, encoding/json gives %q", in, got, want)
		}
		again, err := Append(nil, got)
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("Canonical is not idempotent on %q: %q, %v", got, again, err)
		}
	})
}
