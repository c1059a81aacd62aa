package mcpwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// wireMessage is a JSON-RPC 2.0 message as it is on the wire.
type wireMessage struct {
	Version string          `json:"jsonrpc"`
	ID      any             `json:"id,omitempty"`
	Method  *string         `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *jsonrpc.Error  `json:"error,omitempty"`
}

// Decode decodes one JSON-RPC message like jsonrpc.DecodeMessage does,
// without the SDK's decoder, which allocates a 32 KiB buffer per message
// (docs/upstream/go-sdk-json-decoder.md). The common shapes (a plain "2.0", an integer or plain string
// id, a plain method name, object or array params and result) are read by
// one scan of the envelope; anything else (errors, escapes, unusual ids,
// duplicate keys) takes the standard decoder. Both give the same message.
// The result does not alias line, so a Filter may reuse its buffer.
func Decode(line []byte) (jsonrpc.Message, error) {
	if msg := DecodeEnvelope(line); msg != nil {
		return msg, nil
	}
	return decodeStd(line)
}

// decodeStd decodes with encoding/json.
func decodeStd(line []byte) (jsonrpc.Message, error) {
	var w wireMessage
	if err := json.Unmarshal(line, &w); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if w.Version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", w.Version, "2.0")
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil, err
	}
	if w.Method != nil {
		return &jsonrpc.Request{ID: id, Method: *w.Method, Params: w.Params}, nil
	}
	if !id.IsValid() {
		return nil, fmt.Errorf("invalid message: a response without an id")
	}
	if (w.Result == nil) == (w.Error == nil) {
		return nil, fmt.Errorf("invalid message: a response needs a result or an error, one of them")
	}
	resp := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		resp.Error = w.Error
	}
	return resp, nil
}

// DecodeEnvelope reads a JSON-RPC message of a common shape from line,
// which must be one valid JSON value, in one scan of its envelope; for any
// other shape it returns nil, and the caller decodes line another way
// (Decode falls back to encoding/json; `freecode mcp serve` to the SDK's
// jsonrpc.DecodeMessage, whose strict rules must hold there). On the shapes it
// reads it gives the message both of those give. The message does not
// alias line.
func DecodeEnvelope(line []byte) jsonrpc.Message {
	const (
		seenVersion = 1 << iota
		seenID
		seenMethod
		seenParams
		seenResult
	)
	var (
		seen           int
		id             jsonrpc.ID
		method         string
		params, result []byte
	)
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return nil
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return nil // no version tag: the standard path says so
	}
	for {
		key, end, ok := plainString(line, i)
		if !ok {
			return nil
		}
		i = skipSpace(line, end)
		if i >= len(line) || line[i] != ':' {
			return nil
		}
		start := skipSpace(line, i+1)
		end = skipValue(line, start)
		if end <= start {
			return nil
		}
		val := line[start:end]
		bit := 0
		switch string(key) {
		case "jsonrpc":
			bit = seenVersion
			if string(val) != `"2.0"` {
				return nil
			}
		case "id":
			bit = seenID
			var ok bool
			if id, ok = plainID(val); !ok {
				return nil
			}
		case "method":
			bit = seenMethod
			m, _, ok := plainString(val, 0)
			if !ok || len(m)+2 != len(val) {
				return nil
			}
			method = string(m)
		case "params", "result":
			bit = seenParams
			if key[0] == 'r' {
				bit = seenResult
			}
			if val[0] != '{' && val[0] != '[' {
				return nil
			}
			if bit == seenParams {
				params = val
			} else {
				result = val
			}
		case "error":
			return nil
		default:
			if foldsToKnownKey(key) {
				return nil // encoding/json matches keys case-insensitively
			}
		}
		if seen&bit != 0 {
			return nil // a repeated key: the standard decoder's rules apply
		}
		seen |= bit
		i = skipSpace(line, end)
		if i >= len(line) {
			return nil
		}
		if line[i] == '}' {
			break
		}
		if line[i] != ',' {
			return nil
		}
		i = skipSpace(line, i+1)
	}
	if i = skipSpace(line, i+1); i != len(line) || seen&seenVersion == 0 {
		return nil
	}
	if seen&seenMethod != 0 {
		return &jsonrpc.Request{ID: id, Method: method, Params: cloneRaw(params)}
	}
	if !id.IsValid() || seen&seenResult == 0 {
		return nil
	}
	return &jsonrpc.Response{ID: id, Result: cloneRaw(result)}
}

// foldsToKnownKey reports whether key is an envelope key in another case.
func foldsToKnownKey(key []byte) bool {
	for _, k := range [...]string{"jsonrpc", "id", "method", "params", "result", "error"} {
		if bytes.EqualFold(key, []byte(k)) {
			return true
		}
	}
	return false
}

func cloneRaw(b []byte) json.RawMessage {
	if b == nil {
		return nil
	}
	return json.RawMessage(bytes.Clone(b))
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainString reads a JSON string of plain ASCII (no escapes: encoding/json
// would turn bad UTF-8 into U+FFFD) at b[i]; it returns its contents and
// the index after the closing quote.
func plainString(b []byte, i int) (s []byte, end int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// plainID reads an id that is an integer of at most 15 digits (exact in a
// float64, which is how the standard path reads numbers), a string without
// escapes, or null.
func plainID(val []byte) (jsonrpc.ID, bool) {
	switch {
	case string(val) == "null":
		return jsonrpc.ID{}, true
	case val[0] == '"':
		s, end, ok := plainString(val, 0)
		if !ok || end != len(val) {
			return jsonrpc.ID{}, false
		}
		id, err := jsonrpc.MakeID(string(s))
		return id, err == nil
	}
	digits := val
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && len(digits) > 1) {
		return jsonrpc.ID{}, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return jsonrpc.ID{}, false
		}
	}
	n, err := strconv.ParseInt(string(val), 10, 64)
	if err != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(float64(n))
	return id, err == nil
}

// skipValue returns the index just after the JSON value at b[i], or -1.
// b is known to be valid JSON, so it only tracks strings and nesting.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return -1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := skipValue(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}
