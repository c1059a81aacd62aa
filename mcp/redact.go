package mcp

import (
	"context"
	"fmt"
	"log/slog"
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

// envSecrets returns a local server's own env values, ${env:NAME}
// expanded: a server that prints its environment (to stderr, or stdout
// around its messages) must not show them in its stderr tail, its errors
// or the logs. Like every secret, a value under urlpolicy.MinSecretLen
// bytes is not hidden.
func envSecrets(expanded config.Server) []string {
	out := make([]string, 0, len(expanded.Env))
	for _, v := range expanded.Env {
		out = append(out, v)
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
