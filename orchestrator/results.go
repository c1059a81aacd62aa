package orchestrator

import (
	"fmt"
	"strings"
	"unicode/utf8"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/canonjson"
)

// capResult applies the result cap (MaxResultChars) to r: to its text, and
// on its own to its structuredContent's JSON. What is cut is saved whole
// to a file in the results directory, a note saying so is appended to the
// content, and r.Truncated counts what the model is shown of the result
// against all of it.
func (o *Orchestrator) capResult(r *ToolResult) {
	max := int(o.maxChars.Load())
	if max <= 0 {
		return
	}
	text := o.capText(r, max)
	structured := o.capStructured(r, max)
	if !text.cut && !structured.cut {
		return
	}
	tr := &Truncated{ShownChars: text.shown + structured.shown, TotalChars: text.total + structured.total, SavedTo: structured.savedTo}
	if text.cut {
		tr.SavedTo = text.savedTo
	}
	r.Truncated = tr
}

// capped is what the cap did to one part of a result, in characters.
type capped struct {
	shown, total int
	cut          bool
	savedTo      string // "" when the whole could not be saved
}

// capText cuts r's text to max characters in all, saves the whole text and
// appends a note saying how much was cut and where the rest is. Text is
// that of text contents and of embedded text resources (a server may return
// a whole file either way); images, audio, links and blobs pass through.
func (o *Orchestrator) capText(r *ToolResult, max int) capped {
	total := 0
	var texts []string
	for _, c := range r.Content {
		if t, ok := contentText(c); ok {
			total += utf8.RuneCountInString(t)
			texts = append(texts, t)
		}
	}
	if total <= max {
		return capped{shown: total, total: total}
	}
	budget := max
	out := make([]mcpsdk.Content, 0, len(r.Content)+2)
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
	res := capped{shown: max, total: total, cut: true}
	var note string
	if path, err := o.saveResult(r.CallID, strings.Join(texts, "\n"), ".txt"); err != nil {
		note = fmt.Sprintf("[result truncated: showing %d of %d characters, %d cut; the whole result could not be saved: %v]", max, total, total-max, err)
	} else {
		res.savedTo = path
		note = fmt.Sprintf("[result truncated: showing %d of %d characters, %d cut; the whole result was saved to %s]", max, total, total-max, path)
	}
	r.Content = append(out, &mcpsdk.TextContent{Text: note})
	return res
}

// capStructured drops r's structuredContent when its canonical JSON is
// longer than max characters: it is one JSON value, which cut short would
// no longer parse. The whole of it is saved and a note says where.
func (o *Orchestrator) capStructured(r *ToolResult, max int) capped {
	if r.StructuredContent == nil {
		return capped{}
	}
	data, err := canonjson.AppendValue(nil, r.StructuredContent)
	if err != nil {
		o.log.Warn("structuredContent does not encode as JSON; not capped", "callId", r.CallID, "err", err)
		return capped{}
	}
	total := utf8.RuneCount(data)
	if total <= max {
		return capped{shown: total, total: total}
	}
	r.StructuredContent = nil
	res := capped{total: total, cut: true}
	var note string
	if path, err := o.saveResult(r.CallID, string(data), ".json"); err != nil {
		note = fmt.Sprintf("[structuredContent omitted: its JSON is %d characters, over the cap of %d; it could not be saved: %v]", total, max, err)
	} else {
		res.savedTo = path
		note = fmt.Sprintf("[structuredContent omitted: its JSON is %d characters, over the cap of %d; the whole of it was saved to %s]", total, max, path)
	}
	r.Content = append(r.Content, &mcpsdk.TextContent{Text: note})
	return res
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
