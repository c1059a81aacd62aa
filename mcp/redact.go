package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"unicode"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/urlpolicy"
	"github.com/freecode/freecode/mcp/proc"
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

// envSecrets returns what of a local server's own env must never be
// shown (a server that prints its environment, to stderr or stdout around
// its messages, must not show it in its stderr tail, its errors or the
// logs), and no more: masking a plain value such as MODE=deep or DEBUG=1
// everywhere it occurs would garble unrelated text. raw is the entry as
// written, expanded with its ${env:NAME} references resolved by lookup.
//
// For each env entry NAME=value (value expanded):
//   - the whole value, if NAME looks secret (secretName) and the value is
//     not a boolean word, or the value looks generated (tokenLike) and is
//     not a path;
//   - else, for each ${env:VAR} reference in the entry as written, the
//     value it put in, by the same test with VAR as the name;
//   - else, if the value is a URL, its password and those query values
//     whose parameter name looks secret or that look generated.
//
// As for every secret, a part under urlpolicy.MinSecretLen bytes is not
// hidden.
func envSecrets(raw, expanded config.Server, lookup func(string) (string, bool)) []string {
	var out []string
	for name, v := range expanded.Env {
		if secretValue(name, v) {
			out = append(out, v)
			continue
		}
		_, _ = config.Expand(raw.Env[name], func(ref string) (string, bool) {
			rv, ok := lookup(ref)
			if ok && secretValue(ref, rv) {
				out = append(out, rv)
			}
			return rv, ok
		})
		out = append(out, urlValueSecrets(v)...)
	}
	return out
}

// networkSecrets returns the credentials in the user's network settings
// that a local server gets from environ, the sidecar's environment
// (proc.NetworkEnv: a proxy's or a package index's URL): each URL's
// password and secret-looking query values (urlValueSecrets), and its user
// name when it looks generated, a token riding as the user name. A plain
// user name is left: hiding a login wherever it occurs would garble every
// path under the user's home.
func networkSecrets(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, v, ok := strings.Cut(kv, "=")
		if !ok || !proc.IsNetworkEnv(name) {
			continue
		}
		out = append(out, urlValueSecrets(v)...)
		if u, err := url.Parse(v); err == nil && u.User != nil && tokenLike(u.User.Username()) {
			out = append(out, u.User.Username())
		}
	}
	return out
}

// SecretValue reports whether the logs mask the value v of the variable
// (or header) name (see secretValue): what an import offers to move into
// the secret store.
func SecretValue(name, v string) bool { return secretValue(name, v) }

// secretValue reports whether the value v of the variable name is
// masked: the name looks secret and v is not a boolean word (AUTH=true),
// or v looks generated and is not a path.
func secretValue(name, v string) bool {
	return secretName(name) && !isBoolWord(v) || tokenLike(v) && !isPath(v)
}

// secretNameParts are the words of a variable name that say its value is
// a credential: API_KEY, GITHUB_TOKEN, DB_PASSWORD, CLIENT_SECRET,
// AUTH_HEADER, AWS_CREDENTIALS, PRIVATE_KEY, SESSION_COOKIE.
var secretNameParts = []string{"TOKEN", "KEY", "SECRET", "PASS", "AUTH", "CRED", "PRIVATE", "COOKIE"}

// SecretName reports whether a variable, query parameter or argument
// name looks like it holds a credential (see secretName): what the audit
// trail masks of a call's arguments.
func SecretName(name string) bool { return secretName(name) }

// secretName reports whether a variable (or query parameter) name holds,
// ignoring case, one of secretNameParts.
func secretName(name string) bool {
	up := strings.ToUpper(name)
	for _, p := range secretNameParts {
		if strings.Contains(up, p) {
			return true
		}
	}
	return false
}

// tokenLike reports whether v looks like a generated credential: 16
// bytes or more, no whitespace, letters and digits both, and not a URL
// (whose secrets urlValueSecrets picks).
func tokenLike(v string) bool {
	if len(v) < 16 || strings.Contains(v, "://") {
		return false
	}
	var letter, digit bool
	for _, r := range v {
		switch {
		case unicode.IsSpace(r):
			return false
		case unicode.IsLetter(r):
			letter = true
		case unicode.IsDigit(r):
			digit = true
		}
	}
	return letter && digit
}

// isBoolWord reports whether v is a switch's value, never a secret.
func isBoolWord(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "none", "null":
		return true
	}
	return false
}

// isPath reports whether v is a file path: a long one mixes letters and
// digits without being generated.
func isPath(v string) bool {
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") {
		return !strings.ContainsFunc(v, unicode.IsSpace)
	}
	// C:\ or C:/
	return len(v) > 3 && v[1] == ':' && (v[2] == '\\' || v[2] == '/') && unicode.IsLetter(rune(v[0]))
}

// urlValueSecrets returns, for a URL value, its password and the query
// values that secretValue would mask under their parameter's name.
func urlValueSecrets(v string) []string {
	if !strings.Contains(v, "://") {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil {
		return nil
	}
	var out []string
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
	}
	for k, vs := range u.Query() {
		for _, qv := range vs {
			if secretValue(k, qv) {
				out = append(out, qv)
			}
		}
	}
	return out
}

// redactingHandler masks, in every record, the secrets of the Conn's
// current session: the message and every string, error or Stringer
// attribute. The Conn's logs and the SDK's logs for it go through it, so a
// log line never shows what Status and errors hide.
type redactingHandler struct {
	inner slog.Handler
	red   func() *urlpolicy.Redactor
}

func (h *redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *redactingHandler) Handle(ctx context.Context, r slog.Record) error {
	red := h.red()
	if red == nil {
		return h.inner.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, red.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(red, a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h *redactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := h.red()
	masked := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		masked[i] = redactAttr(red, a)
	}
	return &redactingHandler{inner: h.inner.WithAttrs(masked), red: h.red}
}

func (h *redactingHandler) WithGroup(name string) slog.Handler {
	return &redactingHandler{inner: h.inner.WithGroup(name), red: h.red}
}

func redactAttr(red *urlpolicy.Redactor, a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, red.String(v.String()))
	case slog.KindGroup:
		attrs := v.Group()
		out := make([]any, len(attrs))
		for i, g := range attrs {
			out[i] = redactAttr(red, g)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, red.String(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, red.String(x.String()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
