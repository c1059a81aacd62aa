package mcpwire

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The scans below read parts of a line the Filter passed, which is known
// to be valid JSON, without a decoder: the client reads its common answers
// with them (mcp/stdioanswer.go). Each reads only the plain shapes, on
// which every JSON decoder agrees, and says so when it meets another, so
// that its caller leaves the value to a decoder.

// Members calls fn with the key and the value (raw, spaces trimmed) of
// each member of the JSON object obj, in order, until fn returns false.
// It reports false if obj is no object, a key is not plain ASCII without
// escapes, or fn returned false. obj must be valid JSON.
func Members(obj []byte, fn func(key, val []byte) bool) bool {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	if i = skipSpace(obj, i+1); i < len(obj) && obj[i] == '}' {
		return true
	}
	for {
		key, end, ok := plainString(obj, i)
		if !ok {
			return false
		}
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		start := skipSpace(obj, i+1)
		end = skipValue(obj, start)
		if end <= start || !fn(key, obj[start:end]) {
			return false
		}
		i = skipSpace(obj, end)
		switch {
		case i >= len(obj):
			return false
		case obj[i] == '}':
			return true
		case obj[i] != ',':
			return false
		}
		i = skipSpace(obj, i+1)
	}
}

// Elements calls fn with each element (raw, spaces trimmed) of the JSON
// array arr, in order, until fn returns false. It reports false if arr is
// no array or fn returned false. arr must be valid JSON.
func Elements(arr []byte, fn func(val []byte) bool) bool {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return false
	}
	if i = skipSpace(arr, i+1); i < len(arr) && arr[i] == ']' {
		return true
	}
	for {
		end := skipValue(arr, i)
		if end <= i || !fn(arr[i:end]) {
			return false
		}
		i = skipSpace(arr, end)
		switch {
		case i >= len(arr):
			return false
		case arr[i] == ']':
			return true
		case arr[i] != ',':
			return false
		}
		i = skipSpace(arr, i+1)
	}
}

// String returns the string the JSON string val holds, when every decoder
// reads it alike: its text valid UTF-8 and no escaped surrogate (on bad
// UTF-8 and lone surrogates decoders differ: encoding/json writes U+FFFD,
// the go-sdk's decoder keeps unescaped bytes as they are). It reports false
// for anything else. val must be valid JSON.
func String(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' {
		return "", false
	}
	s := val[1 : len(val)-1]
	plain := true
	for _, c := range s {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return string(s), true
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			j := i + 1
			for j < len(s) && s[j] != '\\' {
				j++
			}
			if !utf8.Valid(s[i:j]) {
				return "", false
			}
			out = append(out, s[i:j]...)
			i = j
			continue
		}
		if i+1 >= len(s) {
			return "", false
		}
		switch e := s[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(s[i+2:])
			if !ok || utf16.IsSurrogate(r) {
				return "", false
			}
			out = utf8.AppendRune(out, r)
			i += 4
		default:
			return "", false
		}
		i += 2
	}
	return string(out), true
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// Value returns what the JSON value val decodes to in an any, as
// encoding/json and the go-sdk's decoder both read it (objects as
// map[string]any, arrays as []any, numbers as float64), for values whose
// strings and keys String and Members read, nested at most MaxValueDepth
// levels (the go-sdk refuses a message nested past 1000); it reports
// false for anything else. val must be valid JSON.
func Value(val []byte) (any, bool) { return value(val, 0) }

// MaxValueDepth bounds the nesting Value reads.
const MaxValueDepth = 100

func value(val []byte, depth int) (any, bool) {
	switch val[0] {
	case '{':
		if depth == MaxValueDepth {
			return nil, false
		}
		m := map[string]any{}
		ok := Members(val, func(key, v []byte) bool {
			x, ok := value(v, depth+1)
			m[string(key)] = x
			return ok
		})
		return m, ok
	case '[':
		if depth == MaxValueDepth {
			return nil, false
		}
		a := []any{}
		ok := Elements(val, func(v []byte) bool {
			x, ok := value(v, depth+1)
			a = append(a, x)
			return ok
		})
		return a, ok
	case '"':
		return String(val)
	case 't':
		return true, string(val) == "true"
	case 'f':
		return false, string(val) == "false"
	case 'n':
		return nil, string(val) == "null"
	}
	f, err := strconv.ParseFloat(string(val), 64)
	return f, err == nil
}
