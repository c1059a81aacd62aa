package orchestrator

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// defaultResultsDir is where whole results that were cut are saved when
// Options.ResultsDir is empty.
func defaultResultsDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "freecode", "results"), nil
}

// capText cuts r's text to max characters in all, saves the whole text to
// a file in dir and appends a note saying how much was cut and where the
// rest is. Text is that of text contents and of embedded text resources (a
// server may return a whole file either way); images, audio, links and
// blobs pass through. max <= 0 means no cap.
func capText(r *ToolResult, max int, dir string) {
	if max <= 0 {
		return
	}
	total := 0
	var texts []string
	for _, c := range r.Content {
		if t, ok := contentText(c); ok {
			total += utf8.RuneCountInString(t)
			texts = append(texts, t)
		}
	}
	if total <= max {
		return
	}
	full := strings.Join(texts, "\n")
	budget := max
	out := make([]mcpsdk.Content, 0, len(r.Content)+1)
	for _, c := range r.Content {
		t, ok := contentText(c)
		if !ok {
			out = append(out, c)
			continue
		}
		if budget <= 0 {
			continue
		}
		n := utf8.RuneCountInString(t)
		if n <= budget {
			out = append(out, c)
			budget -= n
			continue
		}
		out = append(out, withText(c, prefixRunes(t, budget)))
		budget = 0
	}
	tr := &Truncated{ShownChars: max, TotalChars: total}
	var note string
	if path, err := saveResult(dir, r.CallID, full); err != nil {
		note = fmt.Sprintf("[result truncated: showing %d of %d characters, %d cut; the whole result could not be saved: %v]", max, total, total-max, err)
	} else {
		tr.SavedTo = path
		note = fmt.Sprintf("[result truncated: showing %d of %d characters, %d cut; the whole result was saved to %s]", max, total, total-max, path)
	}
	r.Content = append(out, &mcpsdk.TextContent{Text: note})
	r.Truncated = tr
}

// contentText returns the text of a text content or of an embedded text
// resource.
func contentText(c mcpsdk.Content) (string, bool) {
	switch c := c.(type) {
	case *mcpsdk.TextContent:
		return c.Text, true
	case *mcpsdk.EmbeddedResource:
		if c.Resource != nil && c.Resource.Blob == nil {
			return c.Resource.Text, true
		}
	}
	return "", false
}

// withText returns a copy of a content contentText accepts, with text in
// place of its text: annotations and meta are kept, and the caller's
// content is never modified.
func withText(c mcpsdk.Content, text string) mcpsdk.Content {
	switch c := c.(type) {
	case *mcpsdk.TextContent:
		cut := *c
		cut.Text = text
		return &cut
	case *mcpsdk.EmbeddedResource:
		cut, res := *c, *c.Resource
		res.Text = text
		cut.Resource = &res
		return &cut
	}
	return c
}

func prefixRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// saveResult writes text to a new 0600 file in dir (made 0700) and
// returns its path. Results may hold anything a tool read, so the directory
// is tightened to 0700 even if it existed with wider permissions, and the
// name carries 128 random bits: no other user can read, list or guess it.
func saveResult(dir, callID, text string) (string, error) {
	if dir == "" {
		d, err := defaultResultsDir()
		if err != nil {
			return "", err
		}
		dir = d
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", err
	}
	var rnd [16]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", err
	}
	name := filepath.Join(dir, fileSafe(callID)+"-"+hex.EncodeToString(rnd[:])+".txt")
	// O_EXCL: never write through a file or symlink that is already there.
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		os.Remove(name)
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// fileSafe turns a call id (chosen by a model or a frontend) into a short
// file-name prefix that cannot leave the directory.
func fileSafe(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
	if len(s) > 40 {
		s = s[:40]
	}
	if s == "" {
		s = "result"
	}
	return s
}
