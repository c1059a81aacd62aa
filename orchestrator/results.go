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

// capText cuts r's text contents to max characters in all (non-text contents
// pass through), saves the whole text to a file in dir and appends a note
// saying how much was cut and where the rest is. max <= 0 means no cap.
func capText(r *ToolResult, max int, dir string) {
	if max <= 0 {
		return
	}
	total := 0
	for _, c := range r.Content {
		if t, ok := c.(*mcpsdk.TextContent); ok {
			total += utf8.RuneCountInString(t.Text)
		}
	}
	if total <= max {
		return
	}
	full := r.Text()
	budget := max
	out := make([]mcpsdk.Content, 0, len(r.Content)+1)
	for _, c := range r.Content {
		t, ok := c.(*mcpsdk.TextContent)
		if !ok {
			out = append(out, c)
			continue
		}
		if budget <= 0 {
			continue
		}
		n := utf8.RuneCountInString(t.Text)
		if n <= budget {
			out = append(out, t)
			budget -= n
			continue
		}
		cut := *t // keep annotations and meta; never mutate the caller's content
		cut.Text = prefixRunes(t.Text, budget)
		out = append(out, &cut)
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
