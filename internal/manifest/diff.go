package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/freecode/freecode/internal/canonjson"
)

// Change is what differs between a tool's pinned definition and the one
// its server lists, in parts a person can read (and a frontend is sent).
type Change struct {
	Tool string
	// Kind is "changed", "new" (nothing was accepted for the tool yet)
	// or "removed" (the server no longer lists it).
	Kind        string
	Title       *TextChange
	Description *TextChange
	// InputSchema and OutputSchema list the differences by JSON pointer.
	InputSchema  []PointerChange
	OutputSchema []PointerChange
	// Annotations lists the hints that differ, with MCP's defaults
	// applied (an absent destructiveHint is true).
	Annotations []HintChange
}

// TextChange is a changed text: both versions and a word diff of them.
type TextChange struct {
	Old string
	New string
	// Diff is the text with what was removed in [-…-] and what was added
	// in {+…+}.
	Diff string
}

// PointerChange is one difference in a schema.
type PointerChange struct {
	Pointer string // RFC 6901; "" is the whole schema
	Op      string // "add", "remove" or "replace"
	Old     json.RawMessage
	New     json.RawMessage
}

// HintChange is one annotation that differs.
type HintChange struct {
	Hint string // "readOnlyHint", "destructiveHint", …, or "title"
	Old  any
	New  any
}

// Kinds of a Change.
const (
	KindChanged = "changed"
	KindNew     = "new"
	KindRemoved = "removed"
)

// maxPointerChanges bounds the differences listed per schema.
const maxPointerChanges = 200

// Diff returns what differs from pinned to current. A nil pinned is a new
// tool, shown whole as added; a nil current a removed one.
func Diff(pinned, current *Def) *Change {
	switch {
	case pinned == nil && current == nil:
		return nil
	case pinned == nil:
		c := Diff(&Def{Name: current.Name, Annotations: Annotations{Destructive: true, OpenWorld: true}}, current)
		c.Kind = KindNew
		return c
	case current == nil:
		return &Change{Tool: pinned.Name, Kind: KindRemoved}
	}
	c := &Change{Tool: current.Name, Kind: KindChanged}
	if pinned.Title != current.Title {
		c.Title = textChange(pinned.Title, current.Title)
	}
	if pinned.Description != current.Description {
		c.Description = textChange(pinned.Description, current.Description)
	}
	c.InputSchema = schemaDiff(pinned.InputSchema, current.InputSchema)
	c.OutputSchema = schemaDiff(pinned.OutputSchema, current.OutputSchema)
	p, n := pinned.Annotations, current.Annotations
	for _, h := range []struct {
		name     string
		old, new any
	}{
		{"readOnlyHint", p.ReadOnly, n.ReadOnly},
		{"destructiveHint", p.Destructive, n.Destructive},
		{"idempotentHint", p.Idempotent, n.Idempotent},
		{"openWorldHint", p.OpenWorld, n.OpenWorld},
		{"title", p.Title, n.Title},
		{"forModel", !pinned.HiddenFromModel, !current.HiddenFromModel},
	} {
		if h.old != h.new {
			c.Annotations = append(c.Annotations, HintChange{Hint: h.name, Old: h.old, New: h.new})
		}
	}
	return c
}

// ReadOnlyFlip reports whether the change turns readOnlyHint on: what
// would let the tool run unasked, and so never takes effect unaccepted.
func (c *Change) ReadOnlyFlip() bool {
	for _, h := range c.Annotations {
		if h.Hint == "readOnlyHint" && h.New == true {
			return true
		}
	}
	return false
}

// Text returns the change as lines a person reads: the texts as word
// diffs, the schemas by pointer, each annotation flip as old → new. It is
// the servers' text: escape it before it reaches a terminal.
func (c *Change) Text() string {
	var b strings.Builder
	switch c.Kind {
	case KindNew:
		fmt.Fprintf(&b, "%s: new tool\n", c.Tool)
	case KindRemoved:
		fmt.Fprintf(&b, "%s: no longer listed by the server\n", c.Tool)
		return b.String()
	default:
		fmt.Fprintf(&b, "%s: definition changed\n", c.Tool)
	}
	if c.Title != nil {
		fmt.Fprintf(&b, "  title: %s\n", indentLines(c.Title.Diff))
	}
	if c.Description != nil {
		if c.Kind == KindNew {
			fmt.Fprintf(&b, "  description: %s\n", indentLines(c.Description.New))
		} else {
			fmt.Fprintf(&b, "  description: %s\n", indentLines(c.Description.Diff))
		}
	}
	writePointers(&b, "inputSchema", c.InputSchema)
	writePointers(&b, "outputSchema", c.OutputSchema)
	for _, h := range c.Annotations {
		line := fmt.Sprintf("  annotation %s: %s → %s", h.Hint, shownHint(h.Old), shownHint(h.New))
		switch {
		case h.Hint == "readOnlyHint" && h.New == true:
			line += " (not in effect until accepted: the tool still asks)"
		case h.Hint == "forModel":
			line = fmt.Sprintf("  _meta.ui.visibility: %s → %s", audience(h.Old), audience(h.New))
			if h.New == true {
				line += " (not in effect until accepted: no model is shown it)"
			}
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

func audience(forModel any) string {
	if forModel == true {
		return "offered to models"
	}
	return "for the app only"
}

func shownHint(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

// indentLines indents the lines after the first of a multi-line text.
func indentLines(s string) string {
	return strings.ReplaceAll(s, "\n", "\n    ")
}

func writePointers(b *strings.Builder, name string, ps []PointerChange) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(b, "  %s:\n", name)
	for _, p := range ps {
		ptr := p.Pointer
		if ptr == "" {
			ptr = "(whole schema)"
		}
		switch p.Op {
		case "add":
			fmt.Fprintf(b, "    + %s: %s\n", ptr, shownJSON(p.New))
		case "remove":
			fmt.Fprintf(b, "    - %s: %s\n", ptr, shownJSON(p.Old))
		case "more":
			fmt.Fprintf(b, "    … %s\n", ptr)
		default:
			fmt.Fprintf(b, "    ~ %s: %s → %s\n", ptr, shownJSON(p.Old), shownJSON(p.New))
		}
	}
}

// maxShownJSON bounds a value shown in a diff line.
const maxShownJSON = 300

func shownJSON(v json.RawMessage) string {
	if len(v) <= maxShownJSON {
		return string(v)
	}
	cut := maxShownJSON
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return string(v[:cut]) + fmt.Sprintf("… (%d bytes)", len(v))
}

// textChange returns the change from old to new with its word diff.
func textChange(old, new string) *TextChange {
	return &TextChange{Old: old, New: new, Diff: wordDiff(old, new)}
}

// maxDiffCells bounds the work of a word diff (its table's cells); texts
// beyond it are diffed by their common start and end only.
const maxDiffCells = 4 << 20

// wordDiff renders old → new as the text with removed words in [-…-] and
// added ones in {+…+}, as git diff --word-diff does.
func wordDiff(old, new string) string {
	a, b := words(old), words(new)
	// Common start and end first: most edits are local, and it keeps the
	// table small.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out strings.Builder
	out.WriteString(strings.Join(a[:pre], ""))
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(ma)*len(mb) > maxDiffCells {
		writeRun(&out, "[-", "-]", ma)
		writeRun(&out, "{+", "+}", mb)
	} else {
		for _, op := range lcsOps(ma, mb) {
			switch op.kind {
			case ' ':
				out.WriteString(strings.Join(op.words, ""))
			case '-':
				writeRun(&out, "[-", "-]", op.words)
			case '+':
				writeRun(&out, "{+", "+}", op.words)
			}
		}
	}
	out.WriteString(strings.Join(a[len(a)-suf:], ""))
	return out.String()
}

func writeRun(b *strings.Builder, open, close string, ws []string) {
	if len(ws) == 0 {
		return
	}
	b.WriteString(open)
	b.WriteString(strings.Join(ws, ""))
	b.WriteString(close)
}

// words splits s into words (letters and digits), runs of space, and
// single other characters, so that joining them gives s back and a word
// that gains a full stop is not a whole new word.
func words(s string) []string {
	var out []string
	start, prev := 0, -1
	for i, r := range s {
		class := 2 // punctuation: a token of its own
		switch {
		case unicode.IsSpace(r):
			class = 0
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			class = 1
		}
		if i > start && (class != prev || class == 2) {
			out = append(out, s[start:i])
			start = i
		}
		prev = class
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

type diffOp struct {
	kind  byte // ' ', '-' or '+'
	words []string
}

// lcsOps returns the edit from a to b along a longest common subsequence,
// runs of one kind merged.
func lcsOps(a, b []string) []diffOp {
	n, m := len(a), len(b)
	// l[i][j] is the LCS length of a[i:] and b[j:].
	l := make([][]int32, n+1)
	for i := range l {
		l[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	var ops []diffOp
	add := func(kind byte, w string) {
		if k := len(ops); k > 0 && ops[k-1].kind == kind {
			ops[k-1].words = append(ops[k-1].words, w)
			return
		}
		ops = append(ops, diffOp{kind: kind, words: []string{w}})
	}
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			add(' ', a[i])
			i++
			j++
		case l[i+1][j] >= l[i][j+1]:
			add('-', a[i])
			i++
		default:
			add('+', b[j])
			j++
		}
	}
	for ; i < n; i++ {
		add('-', a[i])
	}
	for ; j < m; j++ {
		add('+', b[j])
	}
	return ops
}

// schemaDiff lists the differences of two schemas by JSON pointer.
func schemaDiff(old, new json.RawMessage) []PointerChange {
	if bytes.Equal(old, new) {
		return nil
	}
	a, err1 := decodeValue(old)
	b, err2 := decodeValue(new)
	if err1 != nil || err2 != nil {
		return []PointerChange{{Op: "replace", Old: old, New: new}}
	}
	var out []PointerChange
	diffValue(&out, "", a, b, len(old) > 0, len(new) > 0)
	if len(out) > maxPointerChanges {
		more := len(out) - maxPointerChanges
		out = append(out[:maxPointerChanges], PointerChange{Pointer: fmt.Sprintf("and %d more differences", more), Op: "more"})
	}
	return out
}

// diffValue appends the differences of a and b at ptr; inA and inB say
// whether each side has a value there at all.
func diffValue(out *[]PointerChange, ptr string, a, b any, inA, inB bool) {
	switch {
	case !inA && !inB:
		return
	case !inA:
		*out = append(*out, PointerChange{Pointer: ptr, Op: "add", New: raw(b)})
		return
	case !inB:
		*out = append(*out, PointerChange{Pointer: ptr, Op: "remove", Old: raw(a)})
		return
	}
	am, aObj := a.(map[string]any)
	bm, bObj := b.(map[string]any)
	if aObj && bObj {
		for _, k := range unionKeys(am, bm) {
			av, okA := am[k]
			bv, okB := bm[k]
			diffValue(out, ptr+"/"+escapePointer(k), av, bv, okA, okB)
		}
		return
	}
	aa, aArr := a.([]any)
	ba, bArr := b.([]any)
	if aArr && bArr {
		for i := range max(len(aa), len(ba)) {
			var av, bv any
			if i < len(aa) {
				av = aa[i]
			}
			if i < len(ba) {
				bv = ba[i]
			}
			diffValue(out, ptr+"/"+strconv.Itoa(i), av, bv, i < len(aa), i < len(ba))
		}
		return
	}
	if !equalValue(a, b) {
		*out = append(*out, PointerChange{Pointer: ptr, Op: "replace", Old: raw(a), New: raw(b)})
	}
}

// raw returns a decoded value as canonical JSON.
func raw(v any) json.RawMessage {
	b, err := canonjson.AppendValue(nil, v)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}

// escapePointer escapes a key as a JSON pointer token (RFC 6901).
func escapePointer(k string) string {
	if !strings.ContainsAny(k, "~/") {
		return k
	}
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
