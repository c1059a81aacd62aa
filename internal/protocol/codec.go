package protocol

import (
	"bytes"
	"encoding/json"
	"reflect"

	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"
)

// Codec is the payload codec of both ends of the protocol. FreeCode's own
// types follow encoding/json's rules (omitempty, json.Marshaler, the go-sdk's
// content types), which jsonrpc2's default codec, encoding/json/v2, does not
// apply the same way; LSP's types come from go.lsp.dev/protocol, whose
// unions only its own codec encodes. So each value goes to the encoder of
// the package that declared its type.
type Codec struct{}

var _ jsonrpc2.Codec = Codec{}

// lspPackage is the import path of the LSP types.
var lspPackage = reflect.TypeFor[lsp.InitializeParams]().PkgPath()

func isLSP(v any) bool {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t != nil && t.PkgPath() == lspPackage
}

// Marshal encodes v. Raw JSON passes through as it is.
func (Codec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case jsonrpc2.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	case json.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	}
	if isLSP(v) {
		return lsp.Marshal(v)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// A payload is not HTML: "<" stays "<", as jsonrpc2's Codec contract
	// asks.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Unmarshal decodes data into v. Raw JSON is copied as it is.
func (Codec) Unmarshal(data []byte, v any) error {
	switch p := v.(type) {
	case *jsonrpc2.RawMessage:
		*p = bytes.Clone(data)
		return nil
	case *json.RawMessage:
		*p = bytes.Clone(data)
		return nil
	}
	if isLSP(v) {
		return lsp.Unmarshal(data, v)
	}
	return json.Unmarshal(data, v)
}
