// Package canonjson is FreeCode's one canonical JSON encoding: the bytes
// that content hashes (provider definitions, approvals, tool lists) are
// taken over, so that key order and spacing never change a hash.
package canonjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxDepth bounds the nesting of a schema so that a hostile server cannot
// make the canonical encoder recurse without end.
const maxDepth = 512

// Canonical appends to dst the canonical form of the JSON value src: no
// insignificant whitespace, object keys sorted (by their UTF-8 bytes, the
// order encoding/json uses for maps) with duplicates resolved to the last one
// as encoding/json does, strings re-escaped the one way encoding/json does
// without HTML escaping, numbers kept as written. Two inputs that decode to
// the same value give the same bytes, so a schema's map order or spacing can
// never change a provider's prompt cache key.
func Append(dst, src []byte) ([]byte, error) {
	if !json.Valid(src) {
		return dst, errors.New("canonical JSON: invalid JSON")
	}
	c := canon{src: src}
	out, err := c.value(dst, 0)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// canon walks JSON that json.Valid has already accepted, so it checks only
// what Valid does not: depth.
type canon struct {
	src []byte
	pos int
}

type member struct {
	key        string
	start, end int // the value's canonical bytes, relative to the object's start
}

func (c *canon) skipSpace() {
	for c.pos < len(c.src) {
		switch c.src[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

func (c *canon) value(dst []byte, depth int) ([]byte, error) {
	if depth > maxDepth {
		return dst, fmt.Errorf("canonical JSON: nested deeper than %d", maxDepth)
	}
	c.skipSpace()
	switch ch := c.src[c.pos]; {
	case ch == '{':
		return c.object(dst, depth)
	case ch == '[':
		c.pos++
		dst = append(dst, '[')
		c.skipSpace()
		if c.src[c.pos] == ']' {
			c.pos++
			return append(dst, ']'), nil
		}
		for i := 0; ; i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = c.value(dst, depth+1); err != nil {
				return dst, err
			}
			c.skipSpace()
			if c.src[c.pos] == ']' {
				c.pos++
				return append(dst, ']'), nil
			}
			c.pos++ // ','
		}
	case ch == '"':
		s := c.str()
		return AppendString(dst, s), nil
	default: // number, true, false, null: copied as written
		start := c.pos
		for c.pos < len(c.src) {
			switch c.src[c.pos] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				return append(dst, c.src[start:c.pos]...), nil
			}
			c.pos++
		}
		return append(dst, c.src[start:c.pos]...), nil
	}
}

func (c *canon) object(dst []byte, depth int) ([]byte, error) {
	c.pos++ // '{'
	// Values are first written in input order right after the '{', then the
	// region is copied out and rewritten in key order: one pass over src.
	base := len(dst) + 1
	dst = append(dst, '{')
	var members []member
	for {
		c.skipSpace()
		if c.src[c.pos] == '}' {
			c.pos++
			break
		}
		if c.src[c.pos] == ',' {
			c.pos++
			continue
		}
		key := c.str()
		c.skipSpace()
		c.pos++ // ':'
		start := len(dst)
		var err error
		if dst, err = c.value(dst, depth+1); err != nil {
			return dst, err
		}
		members = append(members, member{key: key, start: start - base, end: len(dst) - base})
	}
	if len(members) == 0 {
		return append(dst, '}'), nil
	}
	values := slices.Clone(dst[base:])
	dst = dst[:base]
	// Stable sort, then keep the last of equal keys (encoding/json's rule).
	slices.SortStableFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	n := 0
	for i, m := range members {
		if i+1 < len(members) && members[i+1].key == m.key {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = AppendString(dst, m.key)
		dst = append(dst, ':')
		dst = append(dst, values[m.start:m.end]...)
	}
	return append(dst, '}'), nil
}

func (c *canon) skipString() {
	c.pos++ // opening quote
	for {
		switch c.src[c.pos] {
		case '\\':
			c.pos += 2
		case '"':
			c.pos++
			return
		default:
			c.pos++
		}
	}
}

// str decodes the string at pos and moves past it.
func (c *canon) str() string {
	start := c.pos
	c.skipString()
	raw := c.src[start:c.pos]
	if !slices.Contains(raw, '\\') {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s) // raw is valid: json.Valid accepted the document
	return s
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string the way encoding/json does with
// HTML escaping off: '"', '\\' and control characters escaped, U+2028 and
// U+2029 escaped (JavaScript line terminators), everything else literal.
// Invalid UTF-8 becomes a literal U+FFFD, as decoding it with encoding/json
// would make it, so that Canonical is idempotent.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
