package config

import (
	"fmt"
	"regexp"
	"strconv"
)

// ParseError is a config or settings file that does not parse, with the
// 1-based line and column of the problem.
type ParseError struct {
	Path      string
	Line, Col int
	Msg       string
}

// Error returns "path:line:col: msg", the form editors turn into a link.
func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.Path, e.Line, e.Col, e.Msg)
}

// hujson reports "hujson: line L, column C: msg".
var hujsonPos = regexp.MustCompile(`^hujson: line (\d+), column (\d+): (.*)$`)

// newParseError turns a hujson syntax error into a ParseError with line:column.
func newParseError(path string, err error) *ParseError {
	pe := &ParseError{Path: path, Line: 1, Col: 1, Msg: err.Error()}
	if m := hujsonPos.FindStringSubmatch(err.Error()); m != nil {
		pe.Line, _ = strconv.Atoi(m[1])
		pe.Col, _ = strconv.Atoi(m[2])
		pe.Msg = m[3]
	}
	return pe
}
