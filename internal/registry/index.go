package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/freecode/freecode/internal/atomicfile"
)

// Entry is one server of the index: its latest version, as a search shows
// it.
type Entry struct {
	Name        string   `json:"name"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description"`
	Version     string   `json:"version"`
	Status      string   `json:"status,omitempty"` // "" is active
	Runs        []string `json:"runs"`             // npm, pypi, oci, nuget, mcpb, remote: how it can run
}

// Runs returns how the server s can run: its packages' types, then
// "remote" if it has remotes, each once.
func Runs(s *Server) []string {
	var out []string
	for _, p := range s.Packages {
		if !slices.Contains(out, p.RegistryType) {
			out = append(out, p.RegistryType)
		}
	}
	if len(s.Remotes) > 0 {
		out = append(out, "remote")
	}
	return out
}

// Index is the latest version of every server of a registry, searched
// locally: a search of thousands of servers is a scan of their lowercased
// text, with no round trip.
type Index struct {
	URL       string    `json:"url"`
	FetchedAt time.Time `json:"fetchedAt"`
	Entries   []Entry   `json:"entries"`

	text []string // Entries' name, title and description, lowercased
}

// Search returns the entries whose name, title or description holds every
// word of query (case ignored), those whose name holds the query first.
// An empty query returns them all.
func (ix *Index) Search(query string) []Entry {
	if ix.text == nil {
		ix.prepare()
	}
	words := strings.Fields(strings.ToLower(query))
	q := strings.Join(words, " ")
	var byName, other []Entry
	for i, t := range ix.text {
		if !allIn(t, words) {
			continue
		}
		if q != "" && strings.Contains(strings.ToLower(ix.Entries[i].Name), q) {
			byName = append(byName, ix.Entries[i])
		} else {
			other = append(other, ix.Entries[i])
		}
	}
	return append(byName, other...)
}

func allIn(t string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(t, w) {
			return false
		}
	}
	return true
}

func (ix *Index) prepare() {
	ix.text = make([]string, len(ix.Entries))
	for i, e := range ix.Entries {
		ix.text[i] = strings.ToLower(e.Name + "\x00" + e.Title + "\x00" + e.Description)
	}
}

// pageSize is the page the index is fetched in: the registry's largest.
const pageSize = 100

// Index returns the index of the latest versions: the cached one while it
// is younger than Options.MaxAge, else fetched anew, page by page through
// the cursors, and cached. refresh fetches it whatever its age.
func (c *Client) Index(ctx context.Context, refresh bool) (*Index, error) {
	path, err := c.indexPath()
	if err != nil {
		return nil, err
	}
	if !refresh {
		if ix, err := c.readIndex(path); err == nil && c.now().Sub(ix.FetchedAt) < c.maxAge {
			return ix, nil
		}
	}
	ix, err := c.fetchIndex(ctx)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(ix)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	// A cache: two processes that fetch at once write the same thing, and
	// the rename leaves one whole file.
	if err := atomicfile.Write(path, b, 0o600); err != nil {
		return nil, err
	}
	return ix, nil
}

func (c *Client) fetchIndex(ctx context.Context) (*Index, error) {
	ix := &Index{URL: c.URL(), FetchedAt: c.now().UTC()}
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		l, err := c.List(ctx, ListOptions{Cursor: cursor, Limit: pageSize, Version: "latest"})
		if err != nil {
			return nil, err
		}
		for i := range l.Servers {
			r := &l.Servers[i]
			if seen[r.Server.Name] || r.Status() == StatusDeleted {
				continue
			}
			seen[r.Server.Name] = true
			e := Entry{Name: r.Server.Name, Title: r.Server.Title, Description: r.Server.Description,
				Version: r.Server.Version, Runs: Runs(&r.Server)}
			if s := r.Status(); s != StatusActive {
				e.Status = s
			}
			ix.Entries = append(ix.Entries, e)
		}
		next := l.Metadata.NextCursor
		if next == "" || len(l.Servers) == 0 {
			break
		}
		if next == cursor || page > 10000 {
			return nil, fmt.Errorf("the registry's cursors do not end (page %d, cursor %q)", page, next)
		}
		cursor = next
	}
	return ix, nil
}

func (c *Client) readIndex(path string) (*Index, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ix Index
	if err := json.Unmarshal(b, &ix); err != nil {
		return nil, err
	}
	if ix.URL != c.URL() {
		return nil, fs.ErrNotExist
	}
	return &ix, nil
}

// indexPath is the index's file: one per registry URL.
func (c *Client) indexPath() (string, error) {
	dir := c.cacheDir
	if dir == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return "", errors.New("no cache directory for the registry's index: " + err.Error())
		}
		dir = filepath.Join(d, "freecode", "registry")
	}
	sum := sha256.Sum256([]byte(c.URL()))
	return filepath.Join(dir, "index-"+hex.EncodeToString(sum[:8])+".json"), nil
}
