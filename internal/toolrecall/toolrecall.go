// Package toolrecall measures how well a tool search finds the tools a task
// needs, on LiveMCPBench (testdata/livemcpbench: 70 MCP servers' tool lists
// and 95 tasks with the tools an annotator used). It loads the data, maps
// the servers' names to names FreeCode's config accepts, scores rankings
// (hit@k, recall@k), and holds a textbook Okapi BM25 as the baseline a
// search is compared with. The tests of the orchestrator and the benchmarks
// in bench/ share it.
package toolrecall

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/freecode/freecode/internal/toolid"
)

// Server is one of the benchmark's MCP servers.
type Server struct {
	// Name is the server's name in a FreeCode config: the benchmark's
	// config key, with what FreeCode's name grammar refuses mapped (see
	// ConfigName).
	Name string
	// Key is the benchmark's own config key ("Ant Design Components").
	Key string
	// Title and Description are what the benchmark's authors wrote of the
	// server (its README's title and summary), not what the server says of
	// itself in initialize: the data does not record that.
	Title, Description string
	Tools              []Tool
}

// Tool is one tool as the server's tools/list returned it.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Task is one of the benchmark's tasks.
type Task struct {
	Index    int    // its place in the annotations, from 0
	Question string // the query
	// Gold holds the names of the annotated tools that some server has,
	// each once; a tool name some servers share matches any of them.
	Gold []string
}

// Bench is the loaded benchmark.
type Bench struct {
	Servers []Server
	Tasks   []Task // only those with some gold tool
}

// DataDir returns the directory that holds the data,
// testdata/livemcpbench at the repository's root, found from the working
// directory up (a test runs in its package's directory).
func DataDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for range 10 {
		d := filepath.Join(dir, "testdata", "livemcpbench")
		if _, err := os.Stat(filepath.Join(d, "tools.json")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", errors.New("livemcpbench: no testdata/livemcpbench above the working directory")
}

// LoadDefault loads the benchmark from DataDir.
func LoadDefault() (*Bench, error) {
	dir, err := DataDir()
	if err != nil {
		return nil, err
	}
	return Load(dir)
}

// Load reads the benchmark from dir.
func Load(dir string) (*Bench, error) {
	var raw []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Tools       map[string]struct {
			Tools []Tool `json:"tools"`
		} `json:"tools"`
	}
	if err := readJSON(filepath.Join(dir, "tools.json"), &raw); err != nil {
		return nil, err
	}
	b := &Bench{}
	names := make(map[string]bool)
	taken := make(map[string]bool)
	for _, r := range raw {
		keys := make([]string, 0, len(r.Tools))
		for k := range r.Tools {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			name := ConfigName(k)
			if taken[name] {
				return nil, fmt.Errorf("livemcpbench: two servers map to %q", name)
			}
			taken[name] = true
			s := Server{Name: name, Key: k, Title: r.Name, Description: r.Description, Tools: r.Tools[k].Tools}
			for _, t := range s.Tools {
				names[t.Name] = true
			}
			b.Servers = append(b.Servers, s)
		}
	}
	var ann []struct {
		Question string `json:"Question"`
		Meta     struct {
			Tools string `json:"Tools"`
		} `json:"Annotator Metadata"`
	}
	if err := readJSON(filepath.Join(dir, "all_annotations.json"), &ann); err != nil {
		return nil, err
	}
	for i, a := range ann {
		t := Task{Index: i, Question: a.Question}
		for _, line := range strings.Split(a.Meta.Tools, "\n") {
			name := strings.TrimSpace(listNumber.ReplaceAllString(line, ""))
			if names[name] && !slices.Contains(t.Gold, name) {
				t.Gold = append(t.Gold, name)
			}
		}
		if len(t.Gold) > 0 {
			b.Tasks = append(b.Tasks, t)
		}
	}
	return b, nil
}

// listNumber is the "3. " before each annotated tool.
var listNumber = regexp.MustCompile(`^\s*\d+\.\s*`)

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("livemcpbench: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("livemcpbench: %s: %w", filepath.Base(path), err)
	}
	return nil
}

// ConfigName maps a server's key to a name FreeCode's config takes:
// characters outside [A-Za-z0-9_-] become "-", runs of "-" and "_" that
// would make "__" or an edge "_" are reduced, and the result is cut to
// toolid.MaxServerLen. "Ant Design Components" becomes
// "Ant-Design-Components".
func ConfigName(key string) string {
	var sb strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !toolid.IsNameChar(c) {
			c = '-'
		}
		s := sb.String()
		if c == '-' && strings.HasSuffix(s, "-") || c == '_' && strings.HasSuffix(s, "_") {
			continue
		}
		sb.WriteByte(c)
	}
	name := strings.Trim(sb.String(), "_-")
	if len(name) > toolid.MaxServerLen {
		name = strings.TrimRight(name[:toolid.MaxServerLen], "_-")
	}
	if name == "" {
		name = "server"
	}
	return name
}

// Scores are the means, over tasks, of a search's hit@1, hit@5 (some gold
// tool in the first 1 or 5 results), recall@5 and recall@10 (the share of
// the task's gold tools in the first 5 or 10).
type Scores struct {
	Tasks                         int
	Hit1, Hit5, Recall5, Recall10 float64
}

// Score scores ranked, the tool names a search returned for each task of
// tasks (ranked[i] for tasks[i]), best first.
func Score(tasks []Task, ranked [][]string) Scores {
	var s Scores
	for i, t := range tasks {
		r := ranked[i]
		found := func(k int) int {
			n := 0
			for _, g := range t.Gold {
				if slices.Contains(r[:min(k, len(r))], g) {
					n++
				}
			}
			return n
		}
		if found(1) > 0 {
			s.Hit1++
		}
		if found(5) > 0 {
			s.Hit5++
		}
		s.Recall5 += float64(found(5)) / float64(len(t.Gold))
		s.Recall10 += float64(found(10)) / float64(len(t.Gold))
		s.Tasks++
	}
	if s.Tasks > 0 {
		n := float64(s.Tasks)
		s.Hit1, s.Hit5, s.Recall5, s.Recall10 = s.Hit1/n, s.Hit5/n, s.Recall5/n, s.Recall10/n
	}
	return s
}

func (s Scores) String() string {
	return fmt.Sprintf("tasks %d  hit@1 %.3f  hit@5 %.3f  recall@5 %.3f  recall@10 %.3f", s.Tasks, s.Hit1, s.Hit5, s.Recall5, s.Recall10)
}

// Split are the scores of a search on the whole benchmark and on its two
// halves: the tasks at even indexes (the half retrieval was tuned on) and
// at odd ones (held out).
type Split struct {
	All, Even, Odd Scores
}

// ScoreSplit scores ranked as Score does, on the whole and on each half.
func ScoreSplit(tasks []Task, ranked [][]string) Split {
	var even, odd []Task
	var re, ro [][]string
	for i, t := range tasks {
		if t.Index%2 == 0 {
			even, re = append(even, t), append(re, ranked[i])
		} else {
			odd, ro = append(odd, t), append(ro, ranked[i])
		}
	}
	return Split{All: Score(tasks, ranked), Even: Score(even, re), Odd: Score(odd, ro)}
}
