package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// globRe is a jsonValidation fileMatch pattern as VS Code matches it on
// a file's path: "**" any number of directories, "*" within one name.
func globRe(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	if !strings.HasPrefix(pattern, "/") && !strings.HasPrefix(pattern, "**") {
		b.WriteString("(.*/)?")
	}
	for i := 0; i < len(pattern); i++ {
		switch {
		case strings.HasPrefix(pattern[i:], "**/"):
			b.WriteString("(.*/)?")
			i += 2
		case pattern[i] == '*':
			b.WriteString("[^/]*")
		default:
			b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// Every file FreeCode reads servers from by its name gets the schema in
// VS Code: the user's config file where FreeCode looks for it, and a
// project's .freecode/settings.json. (A config file named by --config,
// $FREECODE_CONFIG or the extension's freecode.configPath gets it through
// its own "$schema", which FreeCode ignores: TestSchemaKeyIgnored.)
func TestSchemaOfferedForEveryConfigFile(t *testing.T) {
	b, err := os.ReadFile("../editors/vscode/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Contributes struct {
			JSONValidation []struct {
				FileMatch []string `json:"fileMatch"`
				URL       string   `json:"url"`
			} `json:"jsonValidation"`
		} `json:"contributes"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	var patterns []*regexp.Regexp
	for _, v := range pkg.Contributes.JSONValidation {
		if v.URL != "./schemas/config.schema.json" {
			continue
		}
		for _, m := range v.FileMatch {
			patterns = append(patterns, globRe(m))
		}
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	t.Setenv("FREECODE_CONFIG", "")
	userConfig, err := DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(t.TempDir(), "app")
	for _, path := range []string{userConfig, ProjectSettingsPath(project)} {
		p := filepath.ToSlash(path)
		matched := false
		for _, re := range patterns {
			matched = matched || re.MatchString(p)
		}
		if !matched {
			t.Errorf("%s is read by FreeCode, and no jsonValidation fileMatch of the extension offers it the schema", p)
		}
	}
}

// A config file may name its schema; FreeCode reads the file as ever and
// warns of nothing.
func TestSchemaKeyIgnored(t *testing.T) {
	cfg, err := Parse("/x/elsewhere.json", []byte(`{"$schema": "./config.schema.json", "mcp": {"servers": [{"name": "a", "command": ["x"]}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.MCP.Servers) != 1 || len(cfg.Warnings) != 0 {
		t.Errorf("%d servers, warnings %v; want 1 and none", len(cfg.MCP.Servers), cfg.Warnings)
	}
}
