package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{"", nil, ""},
		{"   ", nil, ""},
		{"npx -y @modelcontextprotocol/server-filesystem /path", []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/path"}, ""},
		{"  a\t b\n c  ", []string{"a", "b", "c"}, ""},
		{`node 'my server.js'`, []string{"node", "my server.js"}, ""},
		{`echo "a \"quoted\" \\ word" '\n'`, []string{"echo", `a "quoted" \ word`, `\n`}, ""},
		{`echo "keep \n and \x"`, []string{"echo", `keep \n and \x`}, ""},
		{`a\ b c\\d`, []string{"a b", `c\d`}, ""},
		{`x "" ''`, []string{"x", "", ""}, ""},
		{`--opt="a b"c'd e'`, []string{"--opt=a bcd e"}, ""},
		{"a \\\nb", []string{"a", "b"}, ""},
		{`python -c "print('hi')"`, []string{"python", "-c", "print('hi')"}, ""},
		{`$HOME ~/x`, []string{"$HOME", "~/x"}, ""}, // nothing is expanded
		{`node 'oops`, nil, "unterminated ' quote"},
		{`node "oops`, nil, `unterminated " quote`},
		{`node oops\`, nil, "ends with a backslash"},
	}
	for _, tc := range tests {
		got, err := SplitCommand(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("SplitCommand(%q) error = %v, want one containing %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("SplitCommand(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("SplitCommand(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestExpand(t *testing.T) {
	lookup := env(map[string]string{"A": "alpha", "TOKEN": "s3cr3t", "EMPTY": "", SecretPrefix + "GH": "ghp_x", SecretPrefix + "A": "secret-a"})
	tests := []struct {
		in, want, wantErr string
	}{
		{"plain", "plain", ""},
		{"${env:A}", "alpha", ""},
		{"Bearer ${env:TOKEN}", "Bearer s3cr3t", ""},
		{"${env:A}-${env:A}/${env:EMPTY}.", "alpha-alpha/.", ""},
		{"$HOME and ${HOME} and $ alone", "$HOME and ${HOME} and $ alone", ""},
		{"$${env:A} is literal", "${env:A} is literal", ""},
		{"$$${env:A}", "$${env:A}", ""},
		{"${env:NOPE}", "", "environment variable NOPE is not set"},
		{"${env:X} ${env:Y} ${env:X}", "", "environment variables X, Y are not set"},
		{"${env:A", "", "unterminated ${env: reference"},
		{"${env:}", "", "empty variable name"},
		// The error never quotes the value: what follows is often a token.
		{"Bearer ${env:A tok-9f8e7d", "", "unterminated ${env: reference"},
		// Secrets: looked up with their prefix, never mistaken for a
		// variable of the same name.
		{"Bearer ${secret:GH}", "Bearer ghp_x", ""},
		{"${env:A}/${secret:A}", "alpha/secret-a", ""},
		{"$${secret:GH} is literal", "${secret:GH} is literal", ""},
		{"${secret:NOPE}", "", "secret NOPE is not set (`freecode secret set NOPE`)"},
		{"${env:X}${secret:P}${secret:Q}", "", "environment variable X is not set; secrets P, Q are not set"},
		{"${secret:GH tok-9f8e7d", "", "unterminated ${secret: reference"},
		{"${secret:}", "", "empty variable name"},
	}
	for _, tc := range tests {
		got, err := Expand(tc.in, lookup)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Expand(%q) = %q, %v; want error containing %q", tc.in, got, err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "tok-") {
				t.Errorf("Expand(%q) error %q quotes the value", tc.in, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestExpanded(t *testing.T) {
	s := remote("gh", "https://${env:HOST_PATH}/mcp")
	s.Headers = map[string]string{"Authorization": "Bearer ${env:TOKEN}", "X-Plain": "v"}
	s.Env = map[string]string{"K": "${env:TOKEN}"}
	got, err := s.Expanded(env(map[string]string{"TOKEN": "s3cr3t", "HOST_PATH": "h.example"}))
	if err != nil {
		t.Fatal(err)
	}
	want := remote("gh", "https://h.example/mcp")
	want.Headers = map[string]string{"Authorization": "Bearer s3cr3t", "X-Plain": "v"}
	want.Env = map[string]string{"K": "s3cr3t"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Expanded (-want +got):\n%s", diff)
	}
	if s.Headers["Authorization"] != "Bearer ${env:TOKEN}" || s.Env["K"] != "${env:TOKEN}" {
		t.Errorf("Expanded changed its receiver: %v %v", s.Headers, s.Env)
	}

	_, err = s.Expanded(env(map[string]string{"HOST_PATH": "h"}))
	if err == nil {
		t.Fatal("Expanded with TOKEN unset: no error")
	}
	for _, want := range []string{"server gh", "env K: environment variable TOKEN is not set", "header Authorization: environment variable TOKEN is not set"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestRedacted(t *testing.T) {
	s := remote("gh", "https://user:pw@h.example/mcp")
	s.Headers = map[string]string{"Authorization": "Bearer s3cr3t"}
	s.Env = map[string]string{"TOKEN": "s3cr3t"}
	got := s.Redacted()
	want := remote("gh", "https://***@h.example/mcp")
	want.Headers = map[string]string{"Authorization": "***"}
	want.Env = map[string]string{"TOKEN": "***"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Redacted (-want +got):\n%s", diff)
	}
	if s.Headers["Authorization"] != "Bearer s3cr3t" {
		t.Error("Redacted changed its receiver")
	}
}

// A URL's query often carries an API key: `mcp list`, `mcp add` and
// errors show its values as ***, except a bare ${env:NAME} reference.
func TestRedactedURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://h.example/mcp", "https://h.example/mcp"},
		{"https://h.example/mcp?api_key=s3cr3t&v=2", "https://h.example/mcp?api_key=***&v=***"},
		{"https://h.example/mcp?key=${env:KEY}", "https://h.example/mcp?key=${env:KEY}"},
		{"https://h.example/mcp?key=pre${env:KEY}", "https://h.example/mcp?key=***"},
		{"https://u:s3cr3t@h.example/mcp#s3cr3t", "https://***@h.example/mcp"},
		{"https://ghp_s3cr3t@h.example/mcp", "https://***@h.example/mcp"}, // a token as the user name
		{"https://u:s3cr3t@h.ex ample/?k=s3cr3t", "https://***@h.ex ample/"},
	} {
		if got := (Server{URL: tc.in}).Redacted().URL; got != tc.want {
			t.Errorf("Redacted url of %q = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestEqual changes every field of Server in turn, so a field added later
// that Equal forgets fails here.
func TestEqual(t *testing.T) {
	base := local("a", "x", "y")
	base.Env = map[string]string{"K": "v"}
	base.Headers = map[string]string{"H": "v"}
	if !base.Equal(base.clone()) {
		t.Fatal("a server is not Equal to its copy")
	}
	empty := local("a")
	empty.Command, empty.Env = []string{}, map[string]string{}
	if !empty.Equal(local("a")) {
		t.Error("empty and nil command/env are not Equal")
	}
	typ := reflect.TypeFor[Server]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		changed := base.clone()
		v := reflect.ValueOf(&changed).Elem().Field(i)
		switch f.Name {
		case "DeferTools":
			// How providers are sent the tools, not how the server runs:
			// changing it must not restart the server.
			changed.DeferTools = new(true)
			if !base.Equal(changed) {
				t.Errorf("changing DeferTools: Equal false, which would restart the server")
			}
			continue
		case "Start", "IdleTimeout", "PinningOff":
			// When the server runs, which the Manager changes in place,
			// and how its tools are registered: no restart either.
			if v.Kind() == reflect.Bool {
				v.SetBool(!v.Bool())
			} else if v.Kind() == reflect.String {
				v.SetString(StartOnDemand)
			} else {
				v.SetInt(v.Int() + int64(time.Millisecond))
			}
			if !base.Equal(changed) {
				t.Errorf("changing %s: Equal false, which would restart the server", f.Name)
			}
			continue
		}
		switch v.Kind() {
		case reflect.String:
			v.SetString(v.String() + "-changed")
		case reflect.Bool:
			v.SetBool(!v.Bool())
		case reflect.Int:
			v.SetInt(v.Int() + 1)
		case reflect.Int64: // time.Duration
			v.SetInt(v.Int() + int64(time.Millisecond))
		case reflect.Slice:
			v.Set(reflect.ValueOf([]string{"x", "z"}))
		case reflect.Map:
			v.Set(reflect.ValueOf(map[string]string{"K": "other"}))
		case reflect.Pointer: // nil in base
			v.Set(reflect.New(v.Type().Elem()))
		default:
			t.Fatalf("field %s: kind %s not covered by this test", f.Name, v.Kind())
		}
		if base.Equal(changed) {
			t.Errorf("changing %s: Equal still true", f.Name)
		}
	}
}
