package server

import (
	"strings"
	"testing"
)

// What --trace writes of the requests that carry a secret typed: the
// secret as ***, everything else as sent.
func TestMaskSecrets(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"secrets/set", `{"jsonrpc":"2.0","id":1,"method":"freecode/secrets/set","params":{"name":"TOKEN","value":"s3cret"}}`,
			`{"id":1,"jsonrpc":"2.0","method":"freecode/secrets/set","params":{"name":"TOKEN","value":"***"}}`},
		{"registry/install: every value", `{"jsonrpc":"2.0","id":2,"method":"freecode/registry/install","params":{"name":"io.example/weather","values":{"region":"eu","KEY":"s3cret"}}}`,
			`{"id":2,"jsonrpc":"2.0","method":"freecode/registry/install","params":{"name":"io.example/weather","values":{"KEY":"***","region":"***"}}}`},
		{"registry/install: values not an object", `{"jsonrpc":"2.0","id":3,"method":"freecode/registry/install","params":{"name":"x","values":["s3cret"]}}`,
			`{"id":3,"jsonrpc":"2.0","method":"freecode/registry/install","params":"***"}`},
		{"params not an object", `{"jsonrpc":"2.0","id":4,"method":"freecode/secrets/set","params":["TOKEN","s3cret"]}`,
			`{"id":4,"jsonrpc":"2.0","method":"freecode/secrets/set","params":"***"}`},
		{"not JSON", `{"method":"freecode/secrets/set","params":{"value":"s3cret"`, `{"method":"freecode/secrets/set","params":"*** (not JSON)"}`},
		{"nothing to mask", `{"jsonrpc":"2.0","id":5,"method":"freecode/registry/install","params":{"name":"x"}}`,
			`{"id":5,"jsonrpc":"2.0","method":"freecode/registry/install","params":{"name":"x"}}`},
		{"a response naming the method", `{"jsonrpc":"2.0","id":6,"result":{"text":"see freecode/secrets/set"}}`,
			`{"jsonrpc":"2.0","id":6,"result":{"text":"see freecode/secrets/set"}}`},
		{"the method's name escaped", `{"jsonrpc":"2.0","id":8,"method":"freecode\/secrets\/set","params":{"name":"TOKEN","value":"s3cret"}}`,
			`{"id":8,"jsonrpc":"2.0","method":"freecode\/secrets\/set","params":{"name":"TOKEN","value":"***"}}`},
		{"escaped, not JSON, no request of ours", `{"method":"x\/y","params":{"value":"v"`, `{"method":"x\/y","params":{"value":"v"`},
		// encoding/json, which decodes the params for the handler, takes a
		// key in any case ("Value", "VALUES", even "valueſ" for "values"):
		// so does the mask.
		{"secrets/set: Value", `{"jsonrpc":"2.0","id":9,"method":"freecode/secrets/set","params":{"name":"TOKEN","Value":"s3cret"}}`,
			`{"id":9,"jsonrpc":"2.0","method":"freecode/secrets/set","params":{"name":"TOKEN","value":"***"}}`},
		{"registry/install: VALUES", `{"jsonrpc":"2.0","id":10,"method":"freecode/registry/install","params":{"name":"x","VALUES":{"KEY":"s3cret"}}}`,
			`{"id":10,"jsonrpc":"2.0","method":"freecode/registry/install","params":{"name":"x","values":{"KEY":"***"}}}`},
		{"registry/install: valueſ", `{"jsonrpc":"2.0","id":11,"method":"freecode/registry/install","params":{"name":"x","valueſ":{"KEY":"s3cret"}}}`,
			`{"id":11,"jsonrpc":"2.0","method":"freecode/registry/install","params":{"name":"x","values":{"KEY":"***"}}}`},
		// The sidecar's JSON-RPC reads "method" and "params" as written,
		// the last of each; an escaped key is another to it, but not to a
		// map: neither hides the request that is served.
		{"an escaped method key after", `{"jsonrpc":"2.0","id":12,"method":"freecode/secrets/set","params":{"name":"TOKEN","value":"s3cret"},"m\u0065thod":"x"}`,
			`{"id":12,"jsonrpc":"2.0","method":"freecode/secrets/set","params":{"name":"TOKEN","value":"***"}}`},
		{"an escaped params key after", `{"jsonrpc":"2.0","id":13,"method":"freecode/secrets/set","params":{"name":"TOKEN","value":"s3cret"},"p\u0061rams":{}}`,
			`{"id":13,"jsonrpc":"2.0","method":"freecode/secrets/set","params":{"name":"TOKEN","value":"***"}}`},
		{"a key the params do not have", `{"jsonrpc":"2.0","id":14,"method":"freecode/secrets/set","params":{"name":"TOKEN","value":"s3cret","extra":"s3cret"}}`,
			`{"id":14,"jsonrpc":"2.0","method":"freecode/secrets/set","params":{"name":"TOKEN","value":"***"}}`},
		{"another method", `{"jsonrpc":"2.0","id":7,"method":"freecode/servers","params":{}}`, `{"jsonrpc":"2.0","id":7,"method":"freecode/servers","params":{}}`},
	} {
		got := string(maskSecrets([]byte(tc.in)))
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
		if strings.Contains(tc.in, "s3cret") && strings.Contains(got, "s3cret") {
			t.Errorf("%s: the secret is in %s", tc.name, got)
		}
	}
}
