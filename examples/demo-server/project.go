package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
)

// project is the tree of files the tools work on: the built-in sample
// project, or a real directory given with --root.
type project interface {
	// Files returns every file's slash path, sorted.
	Files() ([]string, error)
	Read(name string) ([]byte, error)
	Remove(name string) error
}

var errNotFound = errors.New("no such file")

// cleanPath turns a tool's path argument into a slash path relative to the
// project root, refusing anything that would leave it.
func cleanPath(p string) (string, error) {
	p = strings.TrimPrefix(strings.ReplaceAll(p, `\`, "/"), "./")
	if p == "" || p == "." || p == "/" {
		return ".", nil
	}
	if strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("path %q must be relative to the project root", p)
	}
	c := path.Clean(p)
	if !fs.ValidPath(c) {
		return "", fmt.Errorf("path %q leaves the project root", p)
	}
	return c, nil
}

// sampleFiles is the built-in project: a tiny Go module, so that list, read
// and search have something realistic to find. Tests depend on its content.
var sampleFiles = map[string]string{
	"README.md": "# greeter\n\nA tiny Go module used by FreeCode's demo MCP server.\n\nRun `go run .` to print a greeting.\n",
	"go.mod":    "module example.com/greeter\n\ngo 1.22\n",
	"main.go": `package main

import (
	"fmt"

	"example.com/greeter/internal/greet"
)

func main() {
	// TODO: take the name from the command line.
	fmt.Println(greet.Hello("world"))
}
`,
	"internal/greet/greet.go": `// Package greet builds greetings.
package greet

// Hello returns a greeting for name.
func Hello(name string) string {
	return "Hello, " + name + "!"
}
`,
	"internal/greet/greet_test.go": `package greet

import "testing"

func TestHello(t *testing.T) {
	if got := Hello("Ada"); got != "Hello, Ada!" {
		t.Errorf("Hello(%q) = %q", "Ada", got)
	}
}
`,
	"docs/notes.md": "# Notes\n\n- TODO: add a --shout flag.\n- The greeting format is fixed on purpose.\n",
}

// memProject is the built-in project, held in memory; delete_file only
// forgets a file for the life of the process.
type memProject struct {
	mu    sync.Mutex
	files map[string]string
}

func newMemProject() *memProject {
	files := make(map[string]string, len(sampleFiles))
	for k, v := range sampleFiles {
		files[k] = v
	}
	return &memProject{files: files}
}

func (p *memProject) Files() ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	names := make([]string, 0, len(p.files))
	for k := range p.files {
		names = append(names, k)
	}
	slices.Sort(names)
	return names, nil
}

func (p *memProject) Read(name string) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.files[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, errNotFound)
	}
	return []byte(s), nil
}

func (p *memProject) Remove(name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.files[name]; !ok {
		return fmt.Errorf("%s: %w", name, errNotFound)
	}
	delete(p.files, name)
	return nil
}

// dirProject is a real directory. os.Root confines every access to it, so a
// symlink or ".." cannot reach a file outside --root.
type dirProject struct {
	root *os.Root
}

// maxDirFiles bounds a walk of a large --root.
const maxDirFiles = 10000

func (p *dirProject) Files() ([]string, error) {
	var names []string
	err := fs.WalkDir(p.root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && name != "." && strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir // .git and friends
		}
		if d.Type().IsRegular() {
			names = append(names, name)
			if len(names) >= maxDirFiles {
				return fs.SkipAll
			}
		}
		return nil
	})
	slices.Sort(names)
	return names, err
}

func (p *dirProject) Read(name string) ([]byte, error) {
	b, err := p.root.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", name, errNotFound)
	}
	return b, err
}

func (p *dirProject) Remove(name string) error {
	fi, err := p.root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", name, errNotFound)
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", name)
	}
	return p.root.Remove(name)
}
