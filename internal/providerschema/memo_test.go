package providerschema

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// memoBytes returns how many bytes the memo counts now.
func (c *Converter) memoBytes() int64 {
	c.memoMu.Lock()
	defer c.memoMu.Unlock()
	return c.cur.bytes + c.prev.bytes
}

// memoized reports whether the conversion of input for f is in the memo.
func (c *Converter) memoized(f Format, input string) bool {
	c.memoMu.Lock()
	defer c.memoMu.Unlock()
	_, cur := c.cur.byFormat[f][input]
	_, prev := c.prev.byFormat[f][input]
	return cur || prev
}

// memoSchema is a distinct schema of about 100 bytes for each i.
func memoSchema(i int) string {
	return fmt.Sprintf(`{"type":"object","properties":{"p%d":{"type":"string","description":"property number %d"}}}`, i, i)
}

// TestMemoBoundedInBytes: whatever is converted, the memo never counts
// more than its bound, a schema in use stays, and one no longer used
// goes.
func TestMemoBoundedInBytes(t *testing.T) {
	const max = 4096
	c := New(&Options{MaxMemoBytes: max})
	hot := memoSchema(-1)
	for i := range 500 {
		if _, _, err := c.Convert(OpenAI, json.RawMessage(memoSchema(i))); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Convert(OpenAI, json.RawMessage(hot)); err != nil {
			t.Fatal(err)
		}
		if n := c.memoBytes(); n > max {
			t.Fatalf("after %d conversions the memo holds %d bytes, bound %d", i+1, n, max)
		}
	}
	if !c.memoized(OpenAI, hot) {
		t.Error("a schema converted on every round left the memo")
	}
	if c.memoized(OpenAI, memoSchema(0)) {
		t.Error("the first schema, not used since, is still in the memo")
	}
	if !c.memoized(OpenAI, memoSchema(499)) {
		t.Error("the last schema converted is not in the memo")
	}
}

// TestMemoLimits: a conversion larger than half the bound is not kept; a
// negative bound keeps nothing; a nil Converter converts.
func TestMemoLimits(t *testing.T) {
	big := `{"type":"object","description":"` + strings.Repeat("a", 3000) + `"}`
	c := New(&Options{MaxMemoBytes: 4096})
	if _, _, err := c.Convert(Anthropic, json.RawMessage(big)); err != nil {
		t.Fatal(err)
	}
	if c.memoized(Anthropic, big) || c.memoBytes() != 0 {
		t.Errorf("a conversion over half the bound was kept (%d bytes)", c.memoBytes())
	}
	off := New(&Options{MaxMemoBytes: -1})
	for range 2 {
		if _, _, err := off.Convert(Anthropic, json.RawMessage(memoSchema(1))); err != nil {
			t.Fatal(err)
		}
	}
	if off.memoBytes() != 0 {
		t.Errorf("a memo that is off holds %d bytes", off.memoBytes())
	}
	var none *Converter
	out, _, err := none.Convert(OpenAI, json.RawMessage(memoSchema(1)))
	if err != nil || len(out) == 0 {
		t.Errorf("nil Converter: %s, %v", out, err)
	}
	if _, _, err := none.Convert("gemini", nil); err == nil {
		t.Error("nil Converter accepted an unknown format")
	}
}

// TestMemoConcurrent: conversions from many goroutines, some of the same
// schemas, agree with fresh ones (run with -race).
func TestMemoConcurrent(t *testing.T) {
	c := New(&Options{MaxMemoBytes: 2048})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				in := json.RawMessage(memoSchema((g + i) % 30))
				got, _, err := c.Convert(Anthropic, in)
				want, _, _ := convertSchema(Anthropic, in)
				if err != nil || string(got) != string(want) {
					t.Errorf("Convert(%s) = %s, %v; want %s", in, got, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := c.memoBytes(); n > 2048 {
		t.Errorf("memo holds %d bytes, bound 2048", n)
	}
}
