package orchestrator

import (
	"encoding/json"
	"unicode"
	"unicode/utf8"
)

// The fields a tool is searched by (BM25F). Each has its own length
// normalization, so a server name shared by many tools or a long schema
// does not drown the words that say what the tool does.
const (
	fieldName   = iota // the tool's own name: "create_issue"
	fieldServer        // its server's name: "github"
	fieldTitle
	fieldDesc
	fieldParams // its input schema's property names, titles and descriptions
	numFields
)

// fieldWeights are what a word is worth in each field: a word of the name
// says more about a tool than a word of its title, which says more than
// one of its description; a parameter's words say least, since a
// parameter is what a tool takes, not what it does. Measured on
// LiveMCPBench's even tasks (see internal/toolrecall): the parameters at
// 0.5 found more than at 0, 0.3 or 1.
var fieldWeights = [numFields]float64{fieldName: 3, fieldServer: 3, fieldTitle: 2, fieldDesc: 1, fieldParams: 0.5}

// maxParamText bounds the schema text indexed per tool, so that a server
// with enormous schemas costs the index no more than a long description.
const maxParamText = 4 << 10

// fieldTexts calls add with the texts of each of t's fields, as many
// times as a field has pieces.
func fieldTexts(t *Tool, add func(field int, text string)) {
	name := t.Name
	if name == "" {
		name = t.ID // a built-in
	}
	add(fieldName, name)
	add(fieldServer, t.Server)
	add(fieldTitle, t.Title)
	add(fieldDesc, t.Description)
	schemaTexts(t.InputSchema, maxParamText, func(s string) { add(fieldParams, s) })
}

// schemaTexts calls emit with what a JSON schema says of its parameters,
// piece by piece, at most limit bytes in all: the name of each property
// (of "properties" at any depth) and each "title" and "description". It
// scans the bytes once instead of decoding them, which would take longer
// than the rest of the index. A schema that is not valid JSON yields what
// was read of it.
func schemaTexts(schema []byte, limit int, emit func(string)) {
	type frame struct {
		obj       bool
		atKey     bool   // in an object, before the next ':'
		key       string // in an object, the key of the current value
		parentKey string // the key this container is the value of
	}
	var stack []frame
	for i := 0; i < len(schema) && limit > 0; i++ {
		switch c := schema[i]; c {
		case '{', '[':
			parent := ""
			if n := len(stack); n > 0 && stack[n-1].obj {
				parent = stack[n-1].key
			}
			stack = append(stack, frame{obj: c == '{', atKey: c == '{', parentKey: parent})
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ':':
			if n := len(stack); n > 0 {
				stack[n-1].atKey = false
			}
		case ',':
			if n := len(stack); n > 0 && stack[n-1].obj {
				stack[n-1].atKey, stack[n-1].key = true, ""
			}
		case '"':
			j := i + 1
			escaped := false
			for j < len(schema) && schema[j] != '"' {
				if schema[j] == '\\' {
					escaped = true
					j++
				}
				j++
			}
			if j >= len(schema) {
				return
			}
			raw := schema[i : j+1]
			i = j
			n := len(stack)
			if n == 0 || !stack[n-1].obj {
				continue
			}
			top := &stack[n-1]
			wanted := top.atKey && top.parentKey == "properties" || !top.atKey && (top.key == "description" || top.key == "title")
			if !top.atKey && !wanted {
				continue
			}
			str := string(raw[1 : len(raw)-1])
			if escaped {
				var u string
				if json.Unmarshal(raw, &u) == nil {
					str = u
				}
			}
			if top.atKey {
				top.key = str
			}
			if wanted {
				str = str[:min(len(str), limit)]
				limit -= len(str)
				emit(str)
			}
		}
	}
}

// isCJK reports whether r is written without spaces between words
// (Chinese, Japanese, Korean): such text is indexed by pairs of
// characters, as search engines do without a dictionary.
func isCJK(r rune) bool {
	return r >= 0x1100 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r))
}

// cjkTerms yields the terms of a run of CJK characters: each pair of
// neighbours ("八字" of "八字信息" and "字信", …), or the one character of a
// run of one.
func cjkTerms(run string, yield func(string) bool) bool {
	_, first := utf8.DecodeRuneInString(run)
	if first == len(run) {
		return yield(run)
	}
	for i := 0; i+first < len(run); {
		_, second := utf8.DecodeRuneInString(run[i+first:])
		if !yield(run[i : i+first+second]) {
			return false
		}
		i, first = i+first, second
	}
	return true
}
