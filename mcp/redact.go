package mcp

import (
	"strings"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/urlpolicy"
)

// remoteSecrets lists what of a remote server's (expanded) entry must never
// be shown: header values (and a bearer token without its scheme), the
// URL's userinfo and query values.
func remoteSecrets(srv config.Server) []string {
	var secrets []string
	for _, value := range srv.Headers {
		secrets = append(secrets, value)
		// Bearer tokens also show up without their scheme.
		if _, tok, ok := strings.Cut(value, " "); ok {
			secrets = append(secrets, tok)
		}
	}
	return append(secrets, urlpolicy.URLSecrets(srv.URL)...)
}

// urlEnvValues returns the values that ${env:NAME} references put into
// raw: a key in a URL's path (https://host/<key>/sse) is as secret as one
// in its query, and only the references say which part it is.
func urlEnvValues(raw string, lookup func(string) (string, bool)) []string {
	var vals []string
	_, _ = config.Expand(raw, func(name string) (string, bool) {
		v, ok := lookup(name)
		if ok {
			vals = append(vals, v)
		}
		return v, ok
	})
	return vals
}

// causedError shows one error's message and unwraps to another: an error
// whose chain the SDK lost gets its cause back.
type causedError struct {
	msg   string
	cause error
}

func (e *causedError) Error() string { return e.msg }
func (e *causedError) Unwrap() error { return e.cause }
