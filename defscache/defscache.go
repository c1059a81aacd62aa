// Package defscache builds and caches the provider-facing tool definitions:
// for each provider format, the exact bytes of the "tools" array sent with a
// model request, and a content hash of them.
//
// Providers cache prompts by prefix, and the tools array comes first, so its
// bytes must not change unless the tool set really changed. The cache
// therefore orders tools stably (built-ins in their fixed order, then MCP
// tools by server, then tool name), encodes every schema canonically (sorted
// keys, one escaping), and is dropped only on a tools-changed event. A rebuild
// that yields the same bytes keeps the same hash, which is how a reconnect
// with an unchanged tool list leaves the prompt cache warm.
//
// Formats:
//
//   - anthropic: the Messages API's client tools,
//     [{"name":…,"description":…,"input_schema":…}].
//   - openai: Chat Completions function tools,
//     [{"type":"function","function":{"name":…,"description":…,"parameters":…}}].
//     Chat Completions is the shape every OpenAI-compatible server accepts;
//     the Responses API's flat shape would be a format of its own. "strict" is
//     not set: strict mode demands every property be required and
//     additionalProperties false, which would change what MCP tools accept.
//
// Every field is always present (an empty description is ""), so an entry's
// bytes depend only on its Def.
package defscache

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/singleflight"

	"github.com/freecode/freecode/internal/canonjson"
	"github.com/freecode/freecode/internal/toolid"
)

// Format is a provider's tool definition format.
type Format string

// The provider formats the cache builds.
const (
	FormatAnthropic Format = "anthropic"
	FormatOpenAI    Format = "openai"
)

// Formats returns every supported format, in a fixed order.
func Formats() []Format { return []Format{FormatAnthropic, FormatOpenAI} }

// Def is one tool as a provider sees it.
type Def struct {
	// Name is the provider-facing name: the tool id, or its alias when the id
	// is longer than toolid.MaxNameLen.
	Name        string
	Description string
	// Schema is the input schema already converted for the format being
	// built. The cache re-encodes it canonically unless Canonical says it
	// is in canonical form already.
	Schema json.RawMessage
	// Canonical says Schema is canonical JSON (canonjson) already, as the
	// provider schema converter writes it, so Encode copies it instead of
	// parsing it again: at thousands of tools that parse was most of a
	// rebuild.
	Canonical bool
	// Builtin tools come first, ordered by Order.
	Builtin bool
	Order   int
	// Server and Tool order MCP tools (by server, then tool).
	Server, Tool string
	// Deferred leaves the tool out of the array: the model finds it with
	// tool_search instead. The entry counts it, and what it would have
	// added (Entry.Deferred, Entry.FullSize), and nothing else: its
	// coming, going or changing leaves the array's bytes and hash alone.
	Deferred bool
}

// Source returns the tools to build the array of format f from. The
// orchestrator supplies it. It may be called concurrently for different
// formats, never twice at once for one format.
type Source func(ctx context.Context, f Format) ([]Def, error)

// Entry is one built tools array. An Entry is shared by every caller and must
// not be modified.
type Entry struct {
	Format Format
	// Bytes is the exact JSON tools array.
	Bytes []byte
	// Hash is the hex SHA-256 of Bytes.
	Hash string
	// Count is the number of tools in Bytes.
	Count int
	// Deferred is the number of tools left out of Bytes (Def.Deferred),
	// and FullSize the length Bytes would have with them in.
	Deferred int
	FullSize int

	gen uint64 // the cache generation it was built in
}

// Options configures a Cache. A nil *Options means the defaults.
type Options struct {
	// Formats restricts the formats the cache serves; nil means Formats().
	Formats []Format
}

// Cache holds one Entry per format.
//
// Get's hit path is one map read and one atomic load: no lock, no copy. A
// miss builds through a singleflight per format. Invalidate bumps a
// generation counter and clears the entries under mu; a build stores its
// entry under mu only if the generation has not moved since it started, so a
// build that an Invalidate overtook is never cached.
type Cache struct {
	src   Source
	slots map[Format]*atomic.Pointer[Entry] // read-only after New
	group singleflight.Group

	gen atomic.Uint64 // bumped by Invalidate (under mu)

	mu sync.Mutex // guards stores into slots and bumps of gen together

	refreshMu sync.Mutex        // serializes Refresh
	reported  map[Format]string // hashes the last Refresh reported
}

// New returns a cache that builds from src.
func New(src Source, opts *Options) *Cache {
	formats := Formats()
	if opts != nil && opts.Formats != nil {
		formats = opts.Formats
	}
	c := &Cache{src: src, slots: make(map[Format]*atomic.Pointer[Entry], len(formats))}
	for _, f := range formats {
		c.slots[f] = new(atomic.Pointer[Entry])
	}
	return c
}

// ErrUnknownFormat is returned for a format the cache does not serve.
var ErrUnknownFormat = errors.New("unknown tool definition format")

// maxStaleBuilds bounds how often Get waits for a fresh build when
// Invalidates keep overtaking the builds it joins.
const maxStaleBuilds = 4

// Get returns the entry for f, building it if there is none. Concurrent
// misses for one format share one build. A caller that arrives after an
// Invalidate never receives an entry built before it, unless Invalidates keep
// coming faster than builds finish (then it gets the newest build it saw).
// The build runs to completion even if ctx is cancelled, so that the callers
// sharing it are not failed by one caller's cancellation; Get itself returns
// when ctx is done.
func (c *Cache) Get(ctx context.Context, f Format) (*Entry, error) {
	slot := c.slots[f]
	if slot == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownFormat, f)
	}
	if e := slot.Load(); e != nil {
		return e, nil
	}
	want := c.gen.Load()
	var last *Entry
	for range maxStaleBuilds {
		ch := c.group.DoChan(string(f), func() (any, error) {
			return c.build(context.WithoutCancel(ctx), f, slot)
		})
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case r := <-ch:
			if r.Err != nil {
				return nil, r.Err
			}
			last = r.Val.(*Entry)
		}
		if last.gen >= want {
			return last, nil
		}
		if e := slot.Load(); e != nil {
			return e, nil
		}
	}
	return last, nil
}

// build makes the entry for f and caches it unless an Invalidate came first.
func (c *Cache) build(ctx context.Context, f Format, slot *atomic.Pointer[Entry]) (*Entry, error) {
	gen := c.gen.Load()
	defs, err := c.src(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("listing %s tool definitions: %w", f, err)
	}
	sent := make([]Def, 0, len(defs))
	var deferred []Def
	for _, d := range defs {
		if d.Deferred {
			deferred = append(deferred, d)
		} else {
			sent = append(sent, d)
		}
	}
	b, err := Encode(f, sent)
	if err != nil {
		return nil, err
	}
	full := len(b)
	if len(deferred) > 0 {
		// Encoded apart: what they would add is their entries and commas.
		d, err := Encode(f, deferred)
		if err != nil {
			return nil, err
		}
		full += len(d) - 2
		if len(sent) > 0 {
			full++
		}
	}
	sum := sha256.Sum256(b)
	e := &Entry{Format: f, Bytes: b, Hash: hex.EncodeToString(sum[:]), Count: len(sent), Deferred: len(deferred), FullSize: full, gen: gen}
	c.mu.Lock()
	if c.gen.Load() == gen {
		slot.Store(e)
	}
	c.mu.Unlock()
	return e, nil
}

// EstimateTokens estimates the tokens a provider counts for n bytes of tool
// definitions: n/4, rounded up. Tokenizers differ by provider and model,
// and JSON schemas, with their quotes and braces, run somewhat above four
// bytes a token; the figure is for comparing sizes and setting budgets, not
// for billing.
func EstimateTokens(n int) int { return (n + 3) / 4 }

// Tokens is EstimateTokens of the array.
func (e *Entry) Tokens() int { return EstimateTokens(len(e.Bytes)) }

// FullTokens is EstimateTokens of the array with the deferred tools in.
func (e *Entry) FullTokens() int { return EstimateTokens(e.FullSize) }

// Invalidate drops every entry: the tool set changed. The next Get rebuilds.
func (c *Cache) Invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen.Add(1)
	for _, slot := range c.slots {
		slot.Store(nil)
	}
}

// Hashes returns the current hash of every format, building what is missing.
func (c *Cache) Hashes(ctx context.Context) (map[Format]string, error) {
	hashes := make(map[Format]string, len(c.slots))
	for f := range c.slots {
		e, err := c.Get(ctx, f)
		if err != nil {
			return nil, err
		}
		hashes[f] = e.Hash
	}
	return hashes, nil
}

// Refresh builds every format (after an Invalidate) and reports whether any
// hash differs from what the previous Refresh reported. The first Refresh
// reports changed: nothing was reported before it. When a rebuild gives the
// same bytes, as on a reconnect with the same tools, changed is false and the
// frontend need not be told. On error nothing is recorded, so the next
// Refresh compares against the last successful one.
func (c *Cache) Refresh(ctx context.Context) (changed bool, hashes map[Format]string, err error) {
	c.refreshMu.Lock()
	defer c.refreshMu.Unlock()
	hashes, err = c.Hashes(ctx)
	if err != nil {
		return false, nil, err
	}
	changed = c.reported == nil || !maps.Equal(c.reported, hashes)
	c.reported = maps.Clone(hashes)
	return changed, hashes, nil
}

// Sort orders defs the cache's way: built-ins by Order, then MCP tools by
// Server, then Tool; Name breaks any remaining tie.
func Sort(defs []Def) {
	slices.SortStableFunc(defs, func(a, b Def) int {
		switch {
		case a.Builtin && !b.Builtin:
			return -1
		case !a.Builtin && b.Builtin:
			return 1
		case a.Builtin:
			return cmp.Or(cmp.Compare(a.Order, b.Order), cmp.Compare(a.Name, b.Name))
		}
		return cmp.Or(cmp.Compare(a.Server, b.Server), cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Name, b.Name))
	})
}

// Encode returns the exact tools array of format f for defs, in the cache's
// order. defs is not modified. Names must be 1–64 characters of
// [A-Za-z0-9_-] (what both providers accept) and unique.
func Encode(f Format, defs []Def) ([]byte, error) {
	if f != FormatAnthropic && f != FormatOpenAI {
		return nil, fmt.Errorf("%w %q", ErrUnknownFormat, f)
	}
	defs = slices.Clone(defs)
	Sort(defs)
	size := 2
	for _, d := range defs {
		size += len(d.Name) + len(d.Description) + len(d.Schema) + 80
	}
	b := make([]byte, 0, size)
	b = append(b, '[')
	seen := make(map[string]bool, len(defs))
	for i, d := range defs {
		if err := toolid.CheckProviderName(d.Name); err != nil {
			return nil, err
		}
		if seen[d.Name] {
			return nil, fmt.Errorf("tool name %q appears twice", d.Name)
		}
		seen[d.Name] = true
		if len(d.Schema) == 0 {
			return nil, fmt.Errorf("tool %q has no schema", d.Name)
		}
		if i > 0 {
			b = append(b, ',')
		}
		var schemaKey string
		switch f {
		case FormatAnthropic:
			b = append(b, `{"name":`...)
			schemaKey = `,"input_schema":`
		case FormatOpenAI:
			b = append(b, `{"type":"function","function":{"name":`...)
			schemaKey = `,"parameters":`
		}
		b = canonjson.AppendString(b, d.Name)
		b = append(b, `,"description":`...)
		b = canonjson.AppendString(b, d.Description)
		b = append(b, schemaKey...)
		if d.Canonical {
			b = append(b, d.Schema...)
		} else {
			var err error
			if b, err = canonjson.Append(b, d.Schema); err != nil {
				return nil, fmt.Errorf("schema of tool %q: %w", d.Name, err)
			}
		}
		b = append(b, '}')
		if f == FormatOpenAI {
			b = append(b, '}')
		}
	}
	return append(b, ']'), nil
}
