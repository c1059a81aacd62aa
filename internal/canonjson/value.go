package canonjson

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// AppendValue appends to dst the canonical form of v, a value as
// encoding/json decodes JSON with UseNumber (map[string]any, []any, string,
// json.Number, bool, nil): the bytes Append gives for the JSON v was
// decoded from, without writing that JSON first. Other types go through
// encoding/json and Append.
func AppendValue(dst []byte, v any) ([]byte, error) {
	return appendValue(dst, v, 0)
}

func appendValue(dst []byte, v any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return dst, fmt.Errorf("canonical JSON: nested deeper than %d", maxDepth)
	}
	var err error
	switch v := v.(type) {
	case map[string]any:
		dst = append(dst, '{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, k)
			dst = append(dst, ':')
			if dst, err = appendValue(dst, v[k], depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendValue(dst, e, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case string:
		return AppendString(dst, v), nil
	case json.Number:
		if !json.Valid([]byte(v)) {
			return dst, fmt.Errorf("canonical JSON: %q is not a number", string(v))
		}
		return append(dst, v...), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case nil:
		return append(dst, "null"...), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return dst, fmt.Errorf("canonical JSON: %w", err)
	}
	return Append(dst, b)
}
