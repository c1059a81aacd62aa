package config

import (
	"bytes"
	"fmt"

	"github.com/tailscale/hujson"
)

// MaxDepth is how deeply objects and arrays may nest in a config or
// settings file. hujson parses by recursion and builds a node for every
// level, so a file of a few hundred kilobytes of brackets costs hundreds of
// megabytes before anything can say it is wrong; and encoding/json, which
// reads the standardized file afterwards, refuses past 10,000 levels with an
// error that names no position. No real config comes near this bound.
const MaxDepth = 1000

// ParseJSONC parses the contents of the file at path as JSON with comments
// and trailing commas, the form of every file FreeCode reads and edits. Its
// errors are *ParseError with line and column, a nesting deeper than
// MaxDepth among them, found before the parse in constant memory. A
// leading UTF-8 byte order mark is skipped, and the offsets in the value
// then count from after it; ReadFile drops it before this sees the file.
func ParseJSONC(path string, data []byte) (hujson.Value, error) {
	data, _ = trimBOM(data)
	if err := checkDepth(path, data); err != nil {
		return hujson.Value{}, err
	}
	v, err := hujson.Parse(data)
	if err != nil {
		return hujson.Value{}, newParseError(path, err)
	}
	return v, nil
}

// checkDepth reports the first bracket that opens a level past MaxDepth.
// It counts brackets outside strings and comments and checks nothing else:
// whatever else is wrong with the file, the parse that follows says.
func checkDepth(path string, data []byte) *ParseError {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			// Skip to the closing quote; an unterminated string is the
			// parser's to report.
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '/':
			switch {
			case i+1 < len(data) && data[i+1] == '/':
				if nl := bytes.IndexByte(data[i:], '\n'); nl >= 0 {
					i += nl
				} else {
					i = len(data)
				}
			case i+1 < len(data) && data[i+1] == '*':
				if end := bytes.Index(data[i+2:], []byte("*/")); end >= 0 {
					i += 2 + end + 1
				} else {
					i = len(data)
				}
			}
		case '{', '[':
			depth++
			if depth > MaxDepth {
				line, col := offsetLineCol(data, i)
				return &ParseError{Path: path, Line: line, Col: col,
					Msg: fmt.Sprintf("objects and arrays nest deeper than %d levels", MaxDepth)}
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

// offsetLineCol turns a byte offset into a 1-based line and column (in
// bytes), as hujson counts them.
func offsetLineCol(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	line = 1 + bytes.Count(data[:off], []byte("\n"))
	col = 1 + off - (bytes.LastIndexByte(data[:off], '\n') + 1)
	return line, col
}
