package web

import (
	"io/fs"
	"regexp"
	"testing"
)

// TestFilesHasPage checks that the embedded files are the whole page: the
// index and every file it references by a relative URL, none empty.
func TestFilesHasPage(t *testing.T) {
	index, err := fs.ReadFile(Files, "index.html")
	if err != nil {
		t.Fatalf("index.html not embedded: %v", err)
	}
	refs := regexp.MustCompile(`(?:src|href)="([^":]+)"`).FindAllStringSubmatch(string(index), -1)
	if len(refs) < 2 {
		t.Fatalf("index.html references %d files, want its script and stylesheet", len(refs))
	}
	for _, m := range refs {
		b, err := fs.ReadFile(Files, m[1])
		if err != nil {
			t.Errorf("index.html references %s, which is not embedded: %v", m[1], err)
		} else if len(b) == 0 {
			t.Errorf("%s is empty", m[1])
		}
	}
}
