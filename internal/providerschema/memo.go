package providerschema

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
)

// defaultMaxMemoBytes is the memo bound of a Converter made with nil
// Options: room for the schemas of a few thousand tools in both formats.
const defaultMaxMemoBytes = 16 << 20

// entryOverhead is what one memoized conversion is counted for besides its
// bytes: its map entry, key and result headers, roughly.
const entryOverhead = 160

// Options configures a Converter. A nil *Options means defaults.
type Options struct {
	// MaxMemoBytes bounds the memo: the bytes of the inputs and outputs
	// (schema, problems, error) of the conversions it keeps, plus a small
	// fixed overhead for each. 0 means 16 MiB; negative turns
	// the memo off.
	MaxMemoBytes int64
}

// Converter converts input schemas for providers and memoizes the results
// by format and input bytes. It is safe for concurrent use.
//
// The memo keeps two generations, each at most half the bound: new results
// and results found again go into the current one; when it is full, it
// becomes the previous one and the previous one is dropped. So a schema
// converted or used since the last turnover stays, and one that no tool
// has needed for two turnovers goes, without bookkeeping on every hit.
type Converter struct {
	maxGen int64 // bound of one generation; 0 when the memo is off

	memoMu sync.Mutex
	cur    generation
	prev   generation
}

// generation is one half of the memo.
type generation struct {
	byFormat map[Format]map[string]*memoEntry
	bytes    int64
}

type memoEntry struct {
	schema   json.RawMessage
	problems []string
	err      error
	size     int64
}

// New returns a Converter.
func New(opts *Options) *Converter {
	max := int64(defaultMaxMemoBytes)
	if opts != nil && opts.MaxMemoBytes != 0 {
		max = opts.MaxMemoBytes
	}
	c := &Converter{}
	if max > 0 {
		c.maxGen = max / 2
	}
	return c
}

// Convert converts a tool's input schema for format f. It returns the
// converted schema (canonical JSON), the problems met (what the provider's
// copy could not express), or an error when the schema cannot be used at
// all. The returned schema is shared with the memo: callers must not modify
// it. A nil Converter converts without a memo.
func (c *Converter) Convert(f Format, input json.RawMessage) (json.RawMessage, []string, error) {
	if f != Anthropic && f != OpenAI {
		return nil, nil, fmt.Errorf("unknown tool definition format %q", f)
	}
	if c == nil || c.maxGen == 0 {
		return convertSchema(f, input)
	}
	c.memoMu.Lock()
	e := c.cur.byFormat[f][string(input)] // no copy of input for a lookup
	if e == nil {
		e = c.promoteLocked(f, input)
	}
	c.memoMu.Unlock()
	if e != nil {
		return e.schema, slices.Clone(e.problems), e.err
	}
	e = &memoEntry{}
	e.schema, e.problems, e.err = convertSchema(f, input)
	e.size = int64(len(input)+len(e.schema)) + entryOverhead
	for _, p := range e.problems {
		e.size += int64(len(p))
	}
	if e.err != nil {
		e.size += int64(len(e.err.Error()))
	}
	c.store(f, string(input), e)
	return e.schema, slices.Clone(e.problems), e.err
}

// promoteLocked moves a conversion memoized in the previous generation
// into the current one and returns it, or returns nil. The caller holds
// memoMu.
func (c *Converter) promoteLocked(f Format, input []byte) *memoEntry {
	e := c.prev.byFormat[f][string(input)]
	if e == nil {
		return nil
	}
	delete(c.prev.byFormat[f], string(input))
	c.prev.bytes -= e.size
	c.storeLocked(f, string(input), e)
	return e
}

// store memoizes one conversion.
func (c *Converter) store(f Format, input string, e *memoEntry) {
	c.memoMu.Lock()
	defer c.memoMu.Unlock()
	c.storeLocked(f, input, e)
}

func (c *Converter) storeLocked(f Format, input string, e *memoEntry) {
	if e.size > c.maxGen {
		return // larger than a generation: never kept
	}
	if _, dup := c.cur.byFormat[f][input]; dup {
		return // converted twice at once
	}
	if c.cur.bytes+e.size > c.maxGen {
		c.prev = c.cur
		c.cur = generation{}
	}
	if c.cur.byFormat == nil {
		c.cur.byFormat = map[Format]map[string]*memoEntry{}
	}
	m := c.cur.byFormat[f]
	if m == nil {
		m = map[string]*memoEntry{}
		c.cur.byFormat[f] = m
	}
	m[input] = e
	c.cur.bytes += e.size
}
