package mcp

import (
	"net/url"
	"slices"
	"strings"

	"github.com/freecode/freecode/config"
)

func (rc *remoteClient) redactErr(err error) error { return redactError(rc.redactor, err) }

// redactError returns err with r's secrets shown as ***; it unwraps to err.
func redactError(r *strings.Replacer, err error) error {
	if err == nil || r == nil {
		return err
	}
	msg := err.Error()
	if red := r.Replace(msg); red != msg {
		return &redactedError{msg: red, err: err}
	}
	return err
}

// remoteSecrets lists what of a remote server's (expanded) entry must never
// be shown: header values (and a bearer token without its scheme), the
// URL's password and query values.
func remoteSecrets(srv config.Server) []string {
	var secrets []string
	for _, value := range srv.Headers {
		secrets = append(secrets, value)
		// Bearer tokens also show up without their scheme.
		if _, tok, ok := strings.Cut(value, " "); ok {
			secrets = append(secrets, tok)
		}
	}
	u, err := url.Parse(srv.URL)
	if err != nil {
		return secrets
	}
	if p, ok := u.User.Password(); ok {
		secrets = append(secrets, p)
	}
	for _, vs := range u.Query() {
		secrets = append(secrets, vs...)
	}
	if u.RawQuery != "" {
		secrets = append(secrets, u.RawQuery)
	}
	return secrets
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

// redactedError shows a message with secrets replaced by ***, and unwraps
// to the original error so errors.Is still works.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }

func (e *redactedError) Unwrap() error { return e.err }

// newRedactor replaces each secret with ***. Secrets shorter than 4 bytes
// are skipped: replacing "a" everywhere would garble the message and
// protects nothing.
func newRedactor(secrets []string) *strings.Replacer {
	var keep []string
	for _, s := range secrets {
		if len(s) >= 4 {
			keep = append(keep, s)
		}
	}
	// Longest first, so a secret that contains another is hidden whole.
	slices.SortFunc(keep, func(a, b string) int { return len(b) - len(a) })
	keep = slices.Compact(keep)
	pairs := make([]string, 0, 2*len(keep))
	for _, s := range keep {
		pairs = append(pairs, s, "***")
		if q := url.QueryEscape(s); q != s {
			pairs = append(pairs, q, "***")
		}
	}
	return strings.NewReplacer(pairs...)
}

// redactURL returns u with its userinfo and query values shown as ***, and
// its fragment dropped: the form in which a URL may be logged.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<invalid URL>"
	}
	hadUser := u.User != nil
	u.User = nil
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"***"}
		}
		u.RawQuery = strings.ReplaceAll(q.Encode(), "%2A", "*")
	}
	u.Fragment, u.RawFragment = "", ""
	out := u.String()
	if hadUser {
		out = strings.Replace(out, "//", "//***@", 1)
	}
	return out
}
