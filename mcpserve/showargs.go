package mcpserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/freecode/freecode/internal/termtext"
)

// maxListing bounds the key-by-key listing of arguments too long to show
// whole, so that a call of a hundred thousand keys is no form of megabytes.
const maxListing = 4 * maxShownArgs

// shownArgs returns a call's arguments as the permission form shows them,
// escaped, and whether that is all of them. Arguments of up to maxShownArgs
// characters are shown whole. Longer ones are listed with every key, in
// the order the orchestrator sorted them, and only values cut: a cut of the
// whole text would show the first keys and hide the rest, so a padding key
// that sorts first could hide the argument that matters.
func shownArgs(raw json.RawMessage) (string, bool) {
	full := termtext.JSON(raw)
	if utf8.RuneCount(full) <= maxShownArgs {
		return string(full), true
	}
	l := &listing{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	// The open objects and arrays, innermost last.
	type frame struct {
		object  bool
		members int  // members or elements written
		key     bool // an object's next token is a key
	}
	var open []*frame
	// done ends a value: in an object, a key comes next.
	done := func() {
		if len(open) > 0 && open[len(open)-1].object {
			open[len(open)-1].key = true
		}
	}
	for l.n <= maxListing {
		tok, err := dec.Token()
		if err != nil {
			break // the end, or arguments that are no JSON: the listing shows what it has
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			open = open[:len(open)-1]
			l.write(string(d))
			done()
			continue
		}
		if len(open) > 0 {
			f := open[len(open)-1]
			if f.members > 0 && (f.key || !f.object) {
				l.write(", ")
			}
			if f.key {
				// Keys are never cut: they say what each value is for.
				l.write(quote(tok.(string)) + ": ")
				f.key = false
				f.members++
				continue
			}
			if !f.object {
				f.members++
			}
		}
		switch v := tok.(type) {
		case json.Delim:
			l.write(string(v))
			open = append(open, &frame{object: v == '{', key: v == '{'})
			continue
		case string:
			l.value(quote, v)
		case json.Number:
			l.value(func(s string) string { return s }, string(v))
		default: // true, false, null
			b, _ := json.Marshal(v)
			l.write(string(b))
		}
		done()
	}
	if l.n > maxListing {
		l.b.WriteString(fmt.Sprintf(" …(the listing stops at %d characters)", maxListing))
	}
	return l.b.String(), false
}

// listing is the text shownArgs builds, with its length in characters.
type listing struct {
	b strings.Builder
	n int
}

func (l *listing) write(s string) {
	l.b.WriteString(s)
	l.n += utf8.RuneCountInString(s)
}

// value writes a scalar, cut to maxShownValue characters with its length.
func (l *listing) value(show func(string) string, s string) {
	n := utf8.RuneCountInString(s)
	if n <= maxShownValue {
		l.write(show(s))
		return
	}
	l.write(fmt.Sprintf("%s…(%d characters in all)", show(string([]rune(s)[:maxShownValue])), n))
}

// quote returns s as a JSON string, escaped for display.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(termtext.JSON(b))
}
