package defscache

import (
	"context"
	"encoding/json"
	"testing"
)

// Deferred tools are counted and sized, and nothing else: the array's
// bytes and hash do not depend on them.
func TestDeferred(t *testing.T) {
	var extra []Def // the deferred tools of the moment
	src := func(context.Context, Format) ([]Def, error) {
		defs := sampleDefs()
		return append(defs, extra...), nil
	}
	c := New(src, nil)
	deferredTool := func(name, desc string) Def {
		return Def{Name: "mcp__big__" + name, Description: desc, Server: "big", Tool: name, Deferred: true,
			Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}
	}
	steps := []struct {
		name  string
		extra []Def
	}{
		{"none deferred", nil},
		{"a deferred server connects", []Def{deferredTool("a", "A"), deferredTool("b", "B")}},
		{"it changes a description", []Def{deferredTool("a", "A, changed"), deferredTool("b", "B")}},
		{"it adds a tool", []Def{deferredTool("a", "A"), deferredTool("b", "B"), deferredTool("c", "C")}},
		{"it goes", nil},
	}
	var first *Entry
	for _, s := range steps {
		extra = s.extra
		c.Invalidate()
		for _, f := range Formats() {
			e, err := c.Get(t.Context(), f)
			if err != nil {
				t.Fatal(err)
			}
			if f == FormatAnthropic {
				if first == nil {
					first = e
				}
				if e.Hash != first.Hash || string(e.Bytes) != string(first.Bytes) {
					t.Errorf("%s: the array changed", s.name)
				}
			}
			all := sampleDefs()
			for _, d := range s.extra {
				d.Deferred = false
				all = append(all, d)
			}
			full, err := Encode(f, all)
			if err != nil {
				t.Fatal(err)
			}
			if e.Count != 5 || e.Deferred != len(s.extra) || e.FullSize != len(full) {
				t.Errorf("%s, %s: count %d, deferred %d, full size %d; want 5, %d, %d", s.name, f, e.Count, e.Deferred, e.FullSize, len(s.extra), len(full))
			}
			if e.FullTokens() != EstimateTokens(len(full)) || e.Tokens() != EstimateTokens(len(e.Bytes)) {
				t.Errorf("%s: tokens %d of %d", s.name, e.Tokens(), e.FullTokens())
			}
		}
	}
	// All of it deferred: an empty array, and the full size of all.
	all := sampleDefs()
	extra = nil
	c2 := New(func(context.Context, Format) ([]Def, error) {
		out := make([]Def, len(all))
		for i, d := range all {
			d.Deferred = true
			out[i] = d
		}
		return out, nil
	}, nil)
	e, err := c2.Get(t.Context(), FormatOpenAI)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := Encode(FormatOpenAI, all)
	if string(e.Bytes) != "[]" || e.Count != 0 || e.Deferred != len(all) || e.FullSize != len(full) {
		t.Errorf("all deferred: %s, count %d, deferred %d, full %d (want %d)", e.Bytes, e.Count, e.Deferred, e.FullSize, len(full))
	}
	if EstimateTokens(0) != 0 || EstimateTokens(1) != 1 || EstimateTokens(8) != 2 {
		t.Errorf("EstimateTokens rounds wrong")
	}
}
