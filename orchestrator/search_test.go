package orchestrator

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"mcp__github__create_issue", []string{"mcp", "github", "create", "issue"}},
		{"listPullRequests", []string{"list", "pull", "request"}},
		{"HTTPServer-status", []string{"http", "server", "status"}},
		{"get_file_v2", []string{"get", "file"}},
		{"Search the issues of a repository.", []string{"search", "issue", "repository"}},
		{"entries, branches, boxes, class, status, analysis", []string{"entry", "branch", "box", "class", "status", "analysis"}},
		{"Écrire un fichier", []string{"écrire", "un", "fichier"}},
		// Identifiers of every convention: snake, kebab, camel, Pascal,
		// acronyms, digits.
		{"getBaziDetail", []string{"get", "bazi", "detail"}},
		{"lol-champion-analysis", []string{"lol", "champion", "analysis"}},
		{"mcp__git__git_diff_unstaged", []string{"mcp", "git", "git", "diff", "unstaged"}},
		{"PDFToText parseJSONSchema", []string{"pdf", "text", "parse", "json", "schema"}},
		{"ec2DescribeInstances", []string{"ec", "describe", "instance"}},
		// A user's request: its pronouns and auxiliaries are stop words.
		{"What files are in my folder? Could you show me them?", []string{"file", "folder", "could", "show"}},
		// Chinese, Japanese and Korean have no spaces: pairs of
		// characters, and a lone character, next to other words.
		{"获取八字信息", []string{"获取", "取八", "八字", "字信", "信息"}},
		{"the 八字 of getBazi", []string{"八字", "get", "bazi"}},
		{"中 text", []string{"中", "text"}},
		{"ファイルを読む", []string{"ファ", "ァイ", "イル", "ルを", "を読", "読む"}},
		{"", nil},
	}
	for _, tc := range tests {
		got := slices.Collect(terms(tc.in))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("terms(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// searchRegistry registers tools of three servers, and a built-in.
func searchRegistry(t testing.TB) *Registry {
	t.Helper()
	reg := NewRegistry(nil)
	c := newFakeRunner()
	mk := func(name, title, desc string) *mcpsdk.Tool {
		return &mcpsdk.Tool{Name: name, Title: title, Description: desc, InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}
	}
	land := mk("land", "", "Land a pull request.")
	land.InputSchema = json.RawMessage(`{"type":"object","properties":{"base":{"type":"string","description":"The branch to land it on."}}}`)
	reg.SetServerTools("github", []*mcpsdk.Tool{
		mk("create_issue", "Create issue", "Open a new issue in a repository."),
		mk("list_issues", "", "List the issues of a repository, newest first."),
		mk("create_pull_request", "", "Open a pull request from a branch."),
		mk("get_file_contents", "", "Read a file of a repository at a ref."),
		land,
	}, c)
	reg.SetServerTools("lab", []*mcpsdk.Tool{
		mk("tissue_sample", "", "Record a tissue sample."),
		mk("notes", "", "Keep notes; mention any issue you hit while sampling."),
	}, c)
	reg.SetServerTools("fs", []*mcpsdk.Tool{
		mk("read_text_file", "Read file", "Read a text file from disk."),
		mk("write_file", "", "Write a file to disk, replacing it."),
		mk("directoryTree", "", "A recursive tree of entries."),
		mk("remove_file", "", "Remove a file from disk."),
	}, c)
	if err := reg.RegisterBuiltin(&Tool{ID: "clock", Description: "Tell the time", ReadOnly: true, Runner: c}); err != nil {
		t.Fatal(err)
	}
	return reg
}

// Ranking is by words, weighted by field: no substring matches, a word of
// the name counts for more than one of the description.
func TestToolSearchRanking(t *testing.T) {
	s := NewToolSearch(searchRegistry(t), nil)
	tests := []struct {
		query string
		limit int
		want  []string
	}{
		// "tissue" holds "issue" but is another word; notes only
		// mentions an issue in its description, so it comes after the
		// tools named for issues.
		{"issue", 10, []string{"mcp__github__create_issue", "mcp__github__list_issues", "mcp__lab__notes"}},
		{"create an issue", 1, []string{"mcp__github__create_issue"}},
		{"list issues", 1, []string{"mcp__github__list_issues"}},
		{"pull requests", 1, []string{"mcp__github__create_pull_request"}},
		// "delete" and "remove" are one action (verbGroups): a tool
		// named with the other verb is found, below one with the word.
		{"delete the file", 10, []string{"mcp__fs__remove_file", "mcp__fs__read_text_file", "mcp__fs__write_file", "mcp__github__get_file_contents"}},
		{"directory tree", 1, []string{"mcp__fs__directoryTree"}},
		{"read file", 2, []string{"mcp__fs__read_text_file", "mcp__github__get_file_contents"}},
		// The server's name is a field of its own, the same in each of
		// its tools: they tie, in the registry's order.
		{"github", 10, []string{"mcp__github__create_issue", "mcp__github__create_pull_request", "mcp__github__get_file_contents", "mcp__github__land", "mcp__github__list_issues"}},
		// A parameter's words count, for less than the name's.
		{"branch", 10, []string{"mcp__github__create_pull_request", "mcp__github__land"}},
		{"the", 10, nil},   // a stop word
		{"zebra", 10, nil}, // no such word
		{"iss", 10, nil},   // a prefix is no word
		{"clock", 10, []string{"clock"}},
	}
	for _, tc := range tests {
		var got []string
		for _, tool := range s.Search(tc.query, tc.limit) {
			got = append(got, tool.ID)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Search(%q) (-want +got):\n%s", tc.query, diff)
		}
	}
}

// tool_search runs through the orchestrator like any tool: its arguments
// are validated, and its result holds what a model needs to call the tools
// it found; a registry change shows in the next search.
func TestToolSearchCall(t *testing.T) {
	reg := searchRegistry(t)
	s := NewToolSearch(reg, &ToolSearchOptions{Searchable: func(t *Tool) bool { return t.Server == "github" }})
	if err := reg.RegisterBuiltin(s.Tool()); err != nil {
		t.Fatal(err)
	}
	o := New(reg, nil)
	run := func(args string) ToolResult {
		return o.Execute(t.Context(), []ToolCall{{CallID: "1", Tool: ToolSearchName, Arguments: json.RawMessage(args)}}, nil)[0]
	}

	r := run(`{"query": "create", "limit": 1}`)
	if r.IsError || r.Decision != DecisionAllowed {
		t.Fatalf("tool_search: %+v", r)
	}
	var res SearchResult
	if err := json.Unmarshal([]byte(r.Text()), &res); err != nil {
		t.Fatalf("result text %q: %v", r.Text(), err)
	}
	// create_pull_request matches too: the result says one more did.
	want := SearchResult{Query: "create", Tools: []FoundTool{{
		Name: "mcp__github__create_issue", Server: "github", Title: "Create issue", Description: "Open a new issue in a repository.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`),
	}}, More: 1}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if sr, ok := r.StructuredContent.(SearchResult); !ok || len(sr.Tools) != 1 {
		t.Errorf("structured content: %#v", r.StructuredContent)
	}
	// Only searchable tools are found.
	if r := run(`{"query": "file"}`); !strings.Contains(r.Text(), "get_file_contents") || strings.Contains(r.Text(), "mcp__fs__") {
		t.Errorf("searching only github: %s", r.Text())
	}
	if r := run(`{"query": "zebra"}`); r.IsError || !strings.Contains(r.Text(), `No tool matches "zebra"`) {
		t.Errorf("no match: %+v", r)
	}
	for _, bad := range []string{`{}`, `{"query": ""}`, `{"query": "x", "limit": 0}`, `{"query": "x", "limit": 21}`, `{"query": "x", "other": 1}`} {
		if r := run(bad); !r.IsError || r.Decision != DecisionInvalid {
			t.Errorf("%s: %+v, want invalid arguments", bad, r)
		}
	}

	reg.SetServerTools("github", []*mcpsdk.Tool{{Name: "merge_branch", Description: "Merge a branch.", InputSchema: json.RawMessage(`{"type":"object"}`)}}, newFakeRunner())
	if got := s.Search("merge", 5); len(got) != 0 {
		t.Errorf("found %v before Invalidate: the index is rebuilt only when told", got)
	}
	s.Invalidate()
	if got := s.Search("merge", 5); len(got) != 1 || got[0].ID != "mcp__github__merge_branch" {
		t.Errorf("after Invalidate: %v", got)
	}
}

func TestRemoveBuiltin(t *testing.T) {
	reg := searchRegistry(t)
	var events []ToolsChanged
	reg.Subscribe(func(ev ToolsChanged) { events = append(events, ev) })
	reg.RemoveBuiltin("clock")
	reg.RemoveBuiltin("clock")
	if _, ok := reg.Lookup("clock"); ok {
		t.Error("clock still registered")
	}
	if diff := cmp.Diff([]ToolsChanged{{Reason: "removed"}}, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if err := reg.RegisterBuiltin(&Tool{ID: "clock", Runner: newFakeRunner()}); err != nil {
		t.Errorf("registering again: %v", err)
	}
}

func TestSchemaTexts(t *testing.T) {
	tests := []struct {
		schema string
		limit  int
		want   string
	}{
		{`{"type":"object","properties":{"repo":{"type":"string","description":"owner/name"},"limit":{"type":"integer"}}}`, 100,
			"repo owner/name limit"},
		// Nested properties and titles count; enum values, types and
		// the keys of other objects do not.
		{`{"title":"Args","properties":{"filter":{"type":"object","properties":{"label":{"enum":["bug","properties"]}}}},"required":["filter"]}`, 100,
			"Args filter label"},
		// A property named "description" is a name; escapes are decoded.
		{`{"properties":{"description":{"description":"the \"text\" \u00e0 set"}}}`, 100, `description the "text" à set`},
		{`{"properties":{"a":{"description":"0123456789"}}}`, 8, "a 0123456"}, // 8 bytes in all
		{`{"properties":{"a":{"description":"cut`, 100, "a"},
		{`not json`, 100, ""},
		{``, 100, ""},
	}
	for _, tc := range tests {
		var pieces []string
		schemaTexts([]byte(tc.schema), tc.limit, func(s string) { pieces = append(pieces, s) })
		if got := strings.Join(pieces, " "); got != tc.want {
			t.Errorf("schemaTexts(%s, %d) = %q, want %q", tc.schema, tc.limit, got, tc.want)
		}
	}
}

// exactRegistry holds a tool whose id, read as words, ranks below another
// tool's: "mcp__docs__search" says docs and search, which web's
// search_docs says louder.
func exactRegistry(t testing.TB) *Registry {
	t.Helper()
	reg := NewRegistry(nil)
	c := newFakeRunner()
	schema := json.RawMessage(`{"type":"object"}`)
	reg.SetServerTools("docs", []*mcpsdk.Tool{{Name: "search", Description: "Look a word up.", InputSchema: schema}}, c)
	reg.SetServerTools("web", []*mcpsdk.Tool{
		{Name: "search_docs", Description: "Search docs: search the docs of any site.", InputSchema: schema},
		{Name: "docs_search", Description: "Search docs pages.", InputSchema: schema},
		{Name: "fetch", Description: "Fetch a page.", InputSchema: schema},
	}, c)
	long := strings.Repeat("x", 70)
	reg.SetServerTools("long", []*mcpsdk.Tool{{Name: long, Description: "A tool whose id is over the providers' limit.", InputSchema: schema}}, c)
	return reg
}

func ids(tools []*Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.ID)
	}
	return out
}

// A query that is a tool's id, or its alias, returns that tool first,
// then what its words match; "select:" returns the tools it names alone.
func TestToolSearchExactID(t *testing.T) {
	reg := exactRegistry(t)
	denied := "mcp__web__fetch"
	s := NewToolSearch(reg, &ToolSearchOptions{Skip: func(t *Tool) bool { return t.ID == denied }})
	if got := ids(s.Search("docs search", 5)); got[0] == "mcp__docs__search" {
		t.Fatalf("the test needs mcp__docs__search to rank below the others on its words: %v", got)
	}
	long, _ := reg.Lookup("mcp__long__" + strings.Repeat("x", 70))
	tests := []struct {
		query string
		limit int
		want  []string
		more  int
	}{
		{"mcp__docs__search", 5, []string{"mcp__docs__search", "mcp__web__search_docs", "mcp__web__docs_search"}, 0},
		{"  mcp__docs__search\n", 2, []string{"mcp__docs__search", "mcp__web__search_docs"}, 1},
		{"mcp__docs__search", 1, []string{"mcp__docs__search"}, 2},
		{long.Alias(), 1, []string{long.ID}, 0},
		{"select:mcp__web__fetch", 5, nil, 0},                                      // a deny rule keeps it out even so
		{denied, 5, []string{"mcp__web__docs_search", "mcp__web__search_docs"}, 0}, // its words find its server's others
		{"select:mcp__docs__search", 5, []string{"mcp__docs__search"}, 0},
		{"select:mcp__web__search_docs, mcp__docs__search,mcp__nope__x,mcp__docs__search", 5, []string{"mcp__web__search_docs", "mcp__docs__search"}, 0},
		{"select:mcp__web__search_docs,mcp__docs__search,mcp__web__docs_search", 2, []string{"mcp__web__search_docs", "mcp__docs__search"}, 1},
		{"select:", 5, nil, 0},
		{"MCP__DOCS__SEARCH", 1, []string{"mcp__web__search_docs"}, 2}, // ids are exact: this is words
	}
	for _, tc := range tests {
		found, more := s.find(tc.query, tc.limit)
		if diff := cmp.Diff(tc.want, ids(found)); diff != "" || more != tc.more {
			t.Errorf("find(%q, %d): more %d, want %d; (-want +got):\n%s", tc.query, tc.limit, more, tc.more, diff)
		}
	}
}

// "more" counts the tools that matched beyond the limit, and none that
// Skip leaves out: a model is never told of a tool it cannot have.
func TestToolSearchMore(t *testing.T) {
	reg := searchRegistry(t)
	skip := ""
	s := NewToolSearch(reg, &ToolSearchOptions{Skip: func(t *Tool) bool { return t.ID == skip }})
	tests := []struct {
		query, skip string
		limit       int
		want        []string
		more        int
	}{
		{"issue", "", 10, []string{"mcp__github__create_issue", "mcp__github__list_issues", "mcp__lab__notes"}, 0},
		{"issue", "", 3, []string{"mcp__github__create_issue", "mcp__github__list_issues", "mcp__lab__notes"}, 0},
		{"issue", "", 1, []string{"mcp__github__create_issue"}, 2},
		{"issue", "mcp__lab__notes", 1, []string{"mcp__github__create_issue"}, 1},
		{"issue", "mcp__github__create_issue", 1, []string{"mcp__github__list_issues"}, 1},
		{"zebra", "", 1, nil, 0},
	}
	for _, tc := range tests {
		skip = tc.skip
		found, more := s.find(tc.query, tc.limit)
		if diff := cmp.Diff(tc.want, ids(found)); diff != "" || more != tc.more {
			t.Errorf("find(%q, %d) skipping %q: more %d, want %d; (-want +got):\n%s", tc.query, tc.limit, tc.skip, more, tc.more, diff)
		}
	}
}

// A hidden tool is found by no query, its exact id and select: included.
func TestToolSearchExactIDHidden(t *testing.T) {
	reg := NewRegistry(nil)
	fc := newFakeRunner()
	file := &mcpsdk.Tool{Name: "delete_file", Description: "delete a file from disk", InputSchema: map[string]any{"type": "object"}}
	reg.SetReviewedTools("demo", []ReviewedTool{{Tool: file, Review: changedReview(t, true)}}, fc, "connected")
	s := NewToolSearch(reg, nil)
	for _, q := range []string{"mcp__demo__delete_file", "select:mcp__demo__delete_file", "delete file"} {
		if got, more := s.find(q, 5); len(got) != 0 || more != 0 {
			t.Errorf("find(%q) = %v, %d more: a hidden tool", q, ids(got), more)
		}
	}
}

// Stop words are left out however they are written, and maxStopWord,
// which spares longer words the lookup, is the longest of them.
func TestStopWords(t *testing.T) {
	longest := 0
	for w := range stopWords {
		longest = max(longest, len(w))
		if w != strings.ToLower(w) {
			t.Errorf("stop word %q is not lower-case: it would never match", w)
		}
		if got := slices.Collect(terms(strings.ToUpper(w) + " " + w + " x" + w)); len(w) > 1 && len(got) != 1 {
			t.Errorf("terms of %q in three spellings: %v, want only x%s", w, got, w)
		}
	}
	if longest != maxStopWord {
		t.Errorf("the longest stop word has %d bytes, maxStopWord is %d", longest, maxStopWord)
	}
}

// A query counts its first maxQueryTerms distinct words, of its first
// maxQueryBytes, and no more, so that a caller cannot make one search cost
// what it likes; repeated words count once.
func TestQueryTermsBounded(t *testing.T) {
	word := func(i int) string { // "qaa", "qab", …: letters only, one term each
		return "q" + string(rune('a'+i/26%26)) + string(rune('a'+i%26))
	}
	var words []string
	for i := range 4 * maxQueryTerms {
		words = append(words, word(i), "repeat")
	}
	qs := queryTerms(strings.Join(words, " "))
	if len(qs) != maxQueryTerms {
		t.Fatalf("%d terms, want %d", len(qs), maxQueryTerms)
	}
	if qs[0].term != word(0) || qs[1].term != "repeat" || qs[maxQueryTerms-1].term != word(maxQueryTerms-2) {
		t.Errorf("terms %v…%v: want the first distinct ones in order", qs[:3], qs[maxQueryTerms-1])
	}
	// A tool that only a word past the bound would match is not found.
	reg := NewRegistry(nil)
	reg.SetServerTools("s", []*mcpsdk.Tool{{Name: "zebra", Description: "Feed the zebra.", InputSchema: json.RawMessage(`{"type":"object"}`)}}, newFakeRunner())
	s := NewToolSearch(reg, nil)
	if got := s.Search(strings.Join(words, " ")+" zebra", 5); len(got) != 0 {
		t.Errorf("found %v by a word past the %dth", ids(got), maxQueryTerms)
	}
	if got := s.Search("zebra "+strings.Join(words, " "), 5); len(got) != 1 {
		t.Errorf("zebra first: found %v", ids(got))
	}
	// Past maxQueryBytes nothing is read, however few its words.
	long := strings.Repeat("repeat ", maxQueryBytes/7+1) + "zebra"
	if got := s.Search(long, 5); len(got) != 0 {
		t.Errorf("found %v by a word past the first %d bytes", ids(got), maxQueryBytes)
	}
	if got := s.Search(long[len(long)-maxQueryBytes:], 5); len(got) != 1 {
		t.Errorf("the same word within the bytes read: found %v", ids(got))
	}
	// A cut in the middle of a character leaves no broken one.
	cut := strings.Repeat("é", maxQueryBytes) // two bytes each
	for _, q := range queryTerms("x" + cut) {
		if !utf8.ValidString(q.term) {
			t.Errorf("term %q is not valid UTF-8", q.term)
		}
	}
}
