package oauthtest

import "net/http"

// NewestOnly serves h to requests of protocol version alone, as a server
// that speaks nothing older does: any other POST (an initialize, which
// carries no MCP-Protocol-Version header) is refused as such a server
// refuses it.
func NewestOnly(h http.Handler, version string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("MCP-Protocol-Version") != version {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Missing MCP-Protocol-Version header"}}`))
			return
		}
		h.ServeHTTP(w, r)
	})
}
