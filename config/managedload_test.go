package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeManaged writes files (a name under dir → contents) into a new
// managed directory and returns it.
func writeManaged(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func mustLoadManaged(t *testing.T, dir string) *Managed {
	t.Helper()
	m, err := loadManaged(dir)
	if err != nil {
		t.Fatalf("loadManaged: %v", err)
	}
	return m
}

// problems returns m's problems as "file:line:col: key: msg (warning)",
// file relative to dir.
func problems(dir string, m *Managed) []string {
	var out []string
	for _, p := range m.Problems {
		rel, _ := filepath.Rel(dir, p.Path)
		s := p.at(filepath.ToSlash(rel)) + p.String()
		if p.Warning {
			s += " (warning)"
		}
		out = append(out, s)
	}
	return out
}

func TestLoadManagedNone(t *testing.T) {
	for _, dir := range []string{filepath.Join(t.TempDir(), "missing"), t.TempDir()} {
		m, err := loadManaged(dir)
		if err != nil {
			t.Fatalf("loadManaged(%s): %v", dir, err)
		}
		if diff := cmp.Diff(&Managed{}, m); diff != "" {
			t.Errorf("loadManaged(%s) (-want +got):\n%s", dir, diff)
		}
	}
}

// LoadManaged reads the directory managedDir names, which only this
// package's tests can point elsewhere.
func TestLoadManagedReadsManagedDir(t *testing.T) {
	dir := writeManaged(t, map[string]string{ManagedSettingsName: `{"message": "ask #it-help"}`})
	old := managedDir
	managedDir = func() string { return dir }
	t.Cleanup(func() { managedDir = old })
	t.Setenv("FREECODE_CONFIG", filepath.Join(t.TempDir(), "config.json"))
	m, err := LoadManaged()
	if err != nil {
		t.Fatal(err)
	}
	if m.Message != "ask #it-help" || ManagedDir() != dir {
		t.Errorf("LoadManaged: message %q from %s, want the file in %s", m.Message, ManagedDir(), dir)
	}
}

func TestManagedDirFor(t *testing.T) {
	tests := []struct {
		goos, programData, want string
	}{
		{"linux", "", "/etc/freecode"},
		{"freebsd", "", "/etc/freecode"},
		{"darwin", "", "/Library/Application Support/FreeCode"},
		{"windows", `D:\ProgramData`, `D:\ProgramData\FreeCode`},
		{"windows", `C:\ProgramData\`, `C:\ProgramData\FreeCode`},
		{"windows", "", `C:\ProgramData\FreeCode`},
		{"windows", `ProgramData`, `C:\ProgramData\FreeCode`},
		{"windows", `\\share\pd`, `C:\ProgramData\FreeCode`},
	}
	for _, tc := range tests {
		got := managedDirFor(tc.goos, func(k string) string {
			if k == "ProgramData" {
				return tc.programData
			}
			return "/elsewhere" // no other variable counts
		})
		if got != tc.want {
			t.Errorf("managedDirFor(%s, ProgramData=%q) = %q, want %q", tc.goos, tc.programData, got, tc.want)
		}
	}
}

func TestLoadManagedParse(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := writeManaged(t, map[string]string{ManagedSettingsName: `{
  // The organization's policy.
  "allowedMcpServers": [
    {"serverName": "github"},
    {"serverCommand": ["npx", "-y", "pkg@1.2.3"]},
    {"serverUrl": "https://*.example.com/*"},
    {"registryName": "io.github.owner/server"},
  ],
  "deniedMcpServers": [{"serverUrl": "https://evil.example.com/*"}],
  "mcpServers": {
    "docs": {"type": "http", "url": "https://docs.example.com/mcp"},
    "tool": {"command": "/usr/local/bin/tool", "args": ["--stdio"], "env": {"TOKEN": "${TOOL_TOKEN}"}}
  },
  "exclusive": true,
  "allowManagedPermissionRulesOnly": true,
  "allowManagedMcpServersOnly": true,
  "permissions": {
    "deny": ["mcp__github__delete_repo"],
    "allow": ["mcp__docs__*"]
  },
  "sandbox": {"require": "project", "allowedDomainsCeiling": ["API.example.com", "*.npmjs.org"], "denyRead": ["~/.aws", "/etc/secrets/"]},
  "audit": {"dir": "/var/log/freecode", "arguments": true, "maxFileBytes": 1048576},
  "message": "ask #it-help",
  "model": "opus",
  "env": {"A": "1"}
}`})
	m := mustLoadManaged(t, dir)
	path := filepath.Join(dir, ManagedSettingsName)
	at := func(list string, i, line, col int, e ServerMatch) ServerMatch {
		e.List, e.Index, e.Path, e.Line, e.Col = list, i, path, line, col
		return e
	}
	want := &Managed{
		Files: []ManagedFile{{Path: path, UserWritable: userWritable(path, dir), Allowlist: true, Exclusive: true}},
		Allowed: []ServerMatch{
			at(keyAllowed, 0, 4, 5, ServerMatch{Name: "github"}),
			at(keyAllowed, 1, 5, 5, ServerMatch{Command: []string{"npx", "-y", "pkg@1.2.3"}}),
			at(keyAllowed, 2, 6, 5, ServerMatch{URL: "https://*.example.com/*"}),
			at(keyAllowed, 3, 7, 5, ServerMatch{Registry: "io.github.owner/server"}),
		},
		Denied: []ServerMatch{at(keyDenied, 0, 9, 24, ServerMatch{URL: "https://evil.example.com/*"})},
		Servers: []Server{
			Server{Name: "docs", Type: TypeRemote, Enabled: true, Scope: ScopeManaged, URL: "https://docs.example.com/mcp", Transport: TransportHTTP}.WithDefaults(),
			Server{Name: "tool", Type: TypeLocal, Enabled: true, Scope: ScopeManaged, Command: []string{"/usr/local/bin/tool", "--stdio"},
				Env: map[string]string{"TOKEN": "${env:TOOL_TOKEN}"}}.WithDefaults(),
		},
		Exclusive: true,
		Permissions: []ManagedRule{
			{Pattern: "mcp__github__delete_repo", Effect: "deny", Path: path, Line: 18, Col: 14},
			{Pattern: "mcp__docs__*", Effect: "allow", Path: path, Line: 19, Col: 15},
		},
		ManagedRulesOnly: true,
		Sandbox: ManagedSandbox{Require: RequireSandboxProject, AllowedDomains: []string{"api.example.com", "*.npmjs.org"},
			DenyRead: []string{filepath.Join(home, ".aws"), "/etc/secrets"}},
		Audit:   ManagedAudit{Dir: "/var/log/freecode", Arguments: true, MaxFileBytes: 1 << 20},
		Message: "ask #it-help",
	}
	gotProblems := problems(dir, m)
	m.Problems = nil
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("loadManaged (-want +got):\n%s", diff)
	}
	wantProblems := []string{
		`managed-settings.json:24:3: model: unknown key "model" is ignored (warning)`,
		`managed-settings.json:25:3: env: unknown key "env" is ignored (warning)`,
	}
	if diff := cmp.Diff(wantProblems, gotProblems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestLoadManagedParseErrors(t *testing.T) {
	tests := []struct {
		name, data string
		line, col  int
	}{
		{"syntax", "{\n  \"exclusive\": true,\n  \"message\": ,\n}", 3, 14},
		{"not an object", "[1, 2]", 1, 1},
		{"too deep", strings.Repeat("[", MaxDepth+1), 1, MaxDepth + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeManaged(t, map[string]string{
				ManagedSettingsName:                    `{"exclusive": true}`,
				ManagedDropInsName + "/20-broken.json": tc.data,
			})
			m, err := loadManaged(dir)
			var pe *ParseError
			if !errors.As(err, &pe) || m != nil {
				t.Fatalf("loadManaged = %v, %v; want no policy and a *ParseError", m, err)
			}
			if pe.Path != filepath.Join(dir, ManagedDropInsName, "20-broken.json") || pe.Line != tc.line || pe.Col != tc.col {
				t.Errorf("error at %s:%d:%d, want 20-broken.json:%d:%d (%v)", pe.Path, pe.Line, pe.Col, tc.line, tc.col, err)
			}
		})
	}
}

// A byte order mark and an empty file are no trouble; a file that is not
// a regular one is an error, never a read that blocks.
func TestLoadManagedOddFiles(t *testing.T) {
	dir := writeManaged(t, map[string]string{
		ManagedSettingsName:                   bom + `{"message": "from the main file"}`,
		ManagedDropInsName + "/10-empty.json": "  \n",
	})
	m := mustLoadManaged(t, dir)
	if m.Message != "from the main file" || len(m.Files) != 2 || len(m.Problems) != 0 {
		t.Errorf("got message %q, %d files, problems %v", m.Message, len(m.Files), m.Problems)
	}
	if err := os.Mkdir(filepath.Join(dir, ManagedDropInsName, "30-dir.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := loadManaged(dir); err != nil {
		t.Errorf("a directory named *.json: %v, want it skipped", err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, ManagedDropInsName, "40-zero.json")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if _, err := loadManaged(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a link to /dev/zero: %v, want not a regular file", err)
	}
}

func TestLoadManagedMerge(t *testing.T) {
	d := ManagedDropInsName + "/"
	dir := writeManaged(t, map[string]string{
		ManagedSettingsName: `{
  "deniedMcpServers": [{"serverName": "a"}],
  "mcpServers": {"docs": {"type": "http", "url": "https://docs.example.com/mcp"}},
  "sandbox": {"require": "all", "allowedDomainsCeiling": ["*.example.com", "registry.npmjs.org"]},
  "audit": {"dir": "/var/log/freecode", "arguments": true},
  "message": "first"
}`,
		d + "20-b.json": `{
  "allowedMcpServers": [],
  "mcpServers": {"docs": {"type": "http", "url": "https://docs2.example.com/mcp"}},
  "sandbox": {"require": "project", "allowedDomainsCeiling": ["api.example.com", "pypi.org"]},
  "audit": {"arguments": false},
  "message": ""
}`,
		d + "10-a.json": `{
  "deniedMcpServers": [{"serverName": "b"}],
  "exclusive": false,
  "allowManagedPermissionRulesOnly": true,
  "audit": {"maxFileBytes": 1000},
  "message": "second"
}`,
		d + "30-c.json":       `{"exclusive": true, "sandbox": {"denyRead": ["/srv/keys"]}}`,
		d + ".40-hidden.json": `{"message": "hidden"}`,
		d + "50-notes.txt":    `{"message": "not json"}`,
	})
	m := mustLoadManaged(t, dir)
	var files []string
	for _, f := range m.Files {
		rel, _ := filepath.Rel(dir, f.Path)
		files = append(files, filepath.ToSlash(rel))
	}
	if diff := cmp.Diff([]string{ManagedSettingsName, d + "10-a.json", d + "20-b.json", d + "30-c.json"}, files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	var denied []string
	for _, e := range m.Denied {
		denied = append(denied, e.Name)
	}
	if diff := cmp.Diff([]string{"a", "b"}, denied); diff != "" {
		t.Errorf("denied (-want +got):\n%s", diff)
	}
	if m.Allowed == nil || len(m.Allowed) != 0 {
		t.Errorf("allowed = %#v, want set and empty", m.Allowed)
	}
	if len(m.Servers) != 1 || m.Servers[0].URL != "https://docs2.example.com/mcp" {
		t.Errorf("servers = %v, want the later docs", m.Servers)
	}
	if !m.Exclusive || !m.ManagedRulesOnly {
		t.Errorf("exclusive %v, rules only %v; want both true", m.Exclusive, m.ManagedRulesOnly)
	}
	wantSandbox := ManagedSandbox{Require: RequireSandboxAll, AllowedDomains: []string{"api.example.com"}, DenyRead: []string{"/srv/keys"}}
	if diff := cmp.Diff(wantSandbox, m.Sandbox); diff != "" {
		t.Errorf("sandbox (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(ManagedAudit{Dir: "/var/log/freecode", Arguments: false, MaxFileBytes: 1000}, m.Audit); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
	if m.Message != "second" {
		t.Errorf("message %q, want the last one set", m.Message)
	}
	want := []string{`managed-settings.d/20-b.json:3:26: mcpServers.docs (server "docs"): server "docs" replaces the managed server of that name in ` +
		filepath.Join(dir, ManagedSettingsName) + " (warning)"}
	if diff := cmp.Diff(want, problems(dir, m)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// Entries that are none of the four shapes: an allow entry allows no
// server (but its kinds of key still count), a deny entry denies by each
// key that reads.
func TestLoadManagedBrokenEntries(t *testing.T) {
	dir := writeManaged(t, map[string]string{ManagedSettingsName: `{
  "allowedMcpServers": [
    {},
    {"serverName": "x", "serverUrl": "https://x.example.com/*"},
    {"serverCommand": "npx -y pkg"},
    {"serverUrl": 5},
    {"serverName": "y", "comment": "why"},
    "github"
  ],
  "deniedMcpServers": [
    {"serverName": "bad", "serverCommand": ["npx", "bad"]},
    {"serverCommand": "npx -y 'evil pkg'"},
    {"serverName": ""},
    {"servername": "typo"},
    {"serverUrl": "evil.example.com"}
  ]
}`})
	m := mustLoadManaged(t, dir)
	type entry struct {
		Index     int
		Name, URL string
		Command   []string
		Invalid   bool
		Line, Col int
	}
	short := func(es []ServerMatch) []entry {
		var out []entry
		for _, e := range es {
			out = append(out, entry{e.Index, e.Name, e.URL, e.Command, e.Invalid, e.Line, e.Col})
		}
		return out
	}
	wantAllowed := []entry{
		{Index: 0, Invalid: true, Line: 3, Col: 5},
		{Index: 1, Name: "x", URL: "https://x.example.com/*", Invalid: true, Line: 4, Col: 5},
		{Index: 2, Command: []string{"npx", "-y", "pkg"}, Invalid: true, Line: 5, Col: 5},
		{Index: 3, URL: "5", Invalid: true, Line: 6, Col: 5},
		{Index: 4, Name: "y", Invalid: true, Line: 7, Col: 5},
	}
	if diff := cmp.Diff(wantAllowed, short(m.Allowed)); diff != "" {
		t.Errorf("allowed (-want +got):\n%s", diff)
	}
	wantDenied := []entry{
		{Index: 0, Command: []string{"npx", "bad"}, Line: 11, Col: 5},
		{Index: 0, Name: "bad", Line: 11, Col: 5},
		{Index: 1, Command: []string{"npx", "-y", "evil pkg"}, Line: 12, Col: 5},
		{Index: 4, URL: "evil.example.com", Line: 15, Col: 5},
	}
	if diff := cmp.Diff(wantDenied, short(m.Denied)); diff != "" {
		t.Errorf("denied (-want +got):\n%s", diff)
	}
	var got []string
	for _, p := range m.Problems {
		got = append(got, fmt.Sprintf("%d:%d %s warning=%v", p.Line, p.Col, p.Key, p.Warning))
	}
	want := []string{
		"3:5 allowedMcpServers[0] warning=false", // names no server
		"4:5 allowedMcpServers[1] warning=false", // two keys
		"5:23 allowedMcpServers[2].serverCommand warning=false",
		"6:19 allowedMcpServers[3].serverUrl warning=false",
		"7:36 allowedMcpServers[4].comment warning=false",
		"8:5 allowedMcpServers[5] warning=false", // not an object
		"11:5 deniedMcpServers[0] warning=false", // two keys: each denies
		"12:23 deniedMcpServers[1].serverCommand warning=false",
		"13:20 deniedMcpServers[2].serverName warning=false",
		"14:5 deniedMcpServers[3] warning=false",
		"14:20 deniedMcpServers[3].servername warning=false",
		"15:19 deniedMcpServers[4].serverUrl warning=true", // no scheme
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s\nall:\n%s", diff, strings.Join(problems(dir, m), "\n"))
	}
}

// Values of the wrong type: errors at their keys, read the strict way.
func TestLoadManagedWrongTypes(t *testing.T) {
	dir := writeManaged(t, map[string]string{ManagedSettingsName: `{
  "allowedMcpServers": {"serverName": "github"},
  "deniedMcpServers": "github",
  "mcpServers": [],
  "exclusive": "yes",
  "permissions": {"deny": ["ok", 5], "ask": "x", "defaultMode": "plan"},
  "sandbox": {"require": "always", "allowedDomainsCeiling": ["ok.example.com", "https://bad/"], "denyRead": ["relative/path"], "enabled": true},
  "audit": {"dir": "logs", "maxFileBytes": -1, "arguments": "yes"},
  "message": 5
}`})
	m := mustLoadManaged(t, dir)
	if m.Allowed == nil || len(m.Allowed) != 0 || len(m.Denied) != 0 || len(m.Servers) != 0 || m.Exclusive {
		t.Errorf("allowed %#v, denied %v, servers %v, exclusive %v: want an empty allow-list and nothing else", m.Allowed, m.Denied, m.Servers, m.Exclusive)
	}
	if m.Sandbox.Require != RequireSandboxAll || !cmp.Equal(m.Sandbox.AllowedDomains, []string{"ok.example.com"}) || m.Sandbox.DenyRead != nil {
		t.Errorf("sandbox %+v, want require all, the good domain, no denyRead", m.Sandbox)
	}
	if len(m.Permissions) != 1 || m.Permissions[0].Pattern != "ok" {
		t.Errorf("permissions %v, want the one good rule", m.Permissions)
	}
	var errs, warns []string
	for _, p := range m.Problems {
		if p.Warning {
			warns = append(warns, p.Key)
		} else {
			errs = append(errs, p.Key)
		}
	}
	wantErrs := []string{keyAllowed, keyDenied, keyMCPServer, "exclusive", "permissions.deny[1]", "permissions.ask",
		"sandbox.require", "sandbox.allowedDomainsCeiling[1]", "sandbox.denyRead[0]", "audit.dir", "audit.maxFileBytes", "audit.arguments", "message"}
	if diff := cmp.Diff(wantErrs, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"permissions.defaultMode", "sandbox.enabled"}, warns); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// A Claude Code entry the importer cannot use is an error at it; what it
// cannot carry over, a warning.
func TestLoadManagedServersImport(t *testing.T) {
	dir := writeManaged(t, map[string]string{ManagedSettingsName: `{
  "mcpServers": {
    "ok": {"type": "stdio", "command": "tool", "headersHelper": "x"},
    "company.internal": {"command": "/usr/local/bin/company-mcp-server"},
    "nothing": {"env": {}}
  }
}`})
	m := mustLoadManaged(t, dir)
	var names []string
	for _, s := range m.Servers {
		names = append(names, s.Name+" "+s.Scope)
	}
	if diff := cmp.Diff([]string{"ok managed", "company-internal managed"}, names); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	want := []string{
		`managed-settings.json:3:11: mcpServers.ok (server "ok"): server "ok": headersHelper not carried over (FreeCode has no such setting) (warning)`,
		`managed-settings.json:4:25: mcpServers.company.internal (server "company-internal"): server "company.internal" imported as "company-internal" ` +
			`(names are 1 to 48 of A-Z a-z 0-9 _ -, unique, without "__", not starting or ending with _) (warning)`,
		`managed-settings.json:5:16: mcpServers.nothing (server "nothing"): server "nothing" left out: it has neither a command nor a url`,
	}
	if diff := cmp.Diff(want, problems(dir, m)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// A key written twice counts the last time, as JSON decoders read it;
// since the first could have denied more, that is an error.
func TestLoadManagedDuplicateKeys(t *testing.T) {
	dir := writeManaged(t, map[string]string{ManagedSettingsName: `{
  "deniedMcpServers": [{"serverName": "a"}],
  "deniedMcpServers": [{"serverName": "b", "serverName": "c"}],
  "managedMcpServers": {"x": {"type": "http", "url": "https://x.example.com/mcp"}}
}`})
	m := mustLoadManaged(t, dir)
	if len(m.Denied) != 1 || m.Denied[0].Name != "c" {
		t.Errorf("denied %v, want the last list's last name", m.Denied)
	}
	var got []string
	for _, p := range m.Problems {
		got = append(got, fmt.Sprintf("%d:%d %s warning=%v", p.Line, p.Col, p.Key, p.Warning))
	}
	want := []string{
		"3:3 deniedMcpServers warning=false",
		"3:44 deniedMcpServers[0].serverName warning=false",
		"4:3 managedMcpServers warning=true",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s\nall:\n%s", diff, strings.Join(problems(dir, m), "\n"))
	}
}
