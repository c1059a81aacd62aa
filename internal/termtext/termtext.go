// Package termtext makes text that FreeCode did not write safe to show on a
// terminal or in a log line: tool names and descriptions, a server's stderr
// and errors, a project's commands. Such text can drive the terminal or
// change what the reader sees, and both are escaped:
//
//   - control characters (C0 but tab, DEL, C1) and bytes that are not
//     UTF-8 become \xNN: an escape sequence could rewrite what the
//     terminal shows, set its title or, through OSC 52, its clipboard, and
//     a carriage return could print a harmless command over a harmful one;
//   - Unicode format characters (bidirectional controls such as U+202E,
//     zero-width characters, the byte-order mark, tag characters) and the
//     line and paragraph separators become \uNNNN (\UNNNNNNNN above
//     U+FFFF): they are invisible, and bidirectional controls reorder what
//     is shown, so that a command can read differently from what runs
//     ("Trojan Source", CVE-2021-42574).
//
// Everything else, other scripts and emoji included, is kept as it is.
package termtext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Escape returns s with the characters described in the package comment
// escaped. A line break is a control character: s comes out as one line.
func Escape(s string) string {
	i := firstUnsafe(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for s = s[i:]; s != ""; {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case isControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case isInvisible(r) && r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		case isInvisible(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	return b.String()
}

// EscapeLines is Escape for each line of s, keeping the line breaks (a
// joined error has several lines).
func EscapeLines(s string) string {
	if firstUnsafe(s) < 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Escape(l)
	}
	return strings.Join(lines, "\n")
}

// firstUnsafe returns the index of the first byte of s that Escape
// changes, or -1.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if isControl(rune(c)) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || isControl(r) || isInvisible(r) {
			return i
		}
		i += size
	}
	return -1
}

// isControl reports a C0 or C1 control character other than tab, or DEL.
func isControl(r rune) bool {
	return (r < 0x20 && r != '\t') || (r >= 0x7f && r <= 0x9f)
}

// isInvisible reports a character that changes what text looks like
// without being seen: the format characters (Cf: bidirectional controls
// U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069; zero-width
// U+200B-U+200D, U+2060, U+FEFF; the soft hyphen; tags), the rest of the
// tag block U+E0000-U+E007F, and the line and paragraph separators, which
// some terminals and editors break lines at.
func isInvisible(r rune) bool {
	return r >= 0xe0000 && r <= 0xe007f || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// JSON returns the JSON text b with every character Escape would escape
// written as a JSON \u escape (a surrogate pair above U+FFFF), and bytes
// that are not UTF-8 as \ufffd. Such characters can only stand inside
// strings, so the result is the same JSON value, safe to print. b is
// returned as it is if nothing needs escaping.
func JSON(b []byte) []byte {
	if firstUnsafe(string(b)) < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, `\ufffd`...)
		case r >= 0x7f && isControl(r), isInvisible(r):
			if r > 0xffff {
				hi, lo := utf16.EncodeRune(r)
				out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
			} else {
				out = fmt.Appendf(out, `\u%04x`, r)
			}
		default:
			// ASCII controls outside strings are JSON whitespace, and
			// inside them an encoder escaped them already.
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}
