// Package plainlog is the sidecar's log as an editor's output channel
// shows it: one line a record, "LEVEL message key=value…", with no
// timestamp (the channel adds its own) and the level first, so that the
// editor can show each line at its level instead of all at one.
package plainlog

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
)

// The formats NewHandler takes.
const (
	FormatPlain = "plain" // "LEVEL message key=value…"
	FormatText  = "text"  // log/slog's text handler: time=… level=… msg=…
	FormatAuto  = "auto"  // text on a terminal, plain otherwise (an editor's pipe)
)

// NewHandler returns the handler of format for w.
func NewHandler(w io.Writer, format string, opts *slog.HandlerOptions) (slog.Handler, error) {
	switch format {
	case FormatAuto:
		if isTerminal(w) {
			return slog.NewTextHandler(w, opts), nil
		}
		return New(w, opts), nil
	case FormatText:
		return slog.NewTextHandler(w, opts), nil
	case FormatPlain:
		return New(w, opts), nil
	}
	return nil, fmt.Errorf("log format %q: want plain, text or auto", format)
}

// isTerminal reports whether w is a character device, as a terminal is.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Handler writes records as plain lines. Its attributes are formatted by a
// slog.TextHandler (quoting, groups, WithAttrs), from which it takes all
// but the time, the level and the message.
type Handler struct {
	out   *output
	inner slog.Handler // writes the attributes alone to out.buf
	level slog.Leveler
}

// output is what the handlers derived from one New share: the writer, and
// the buffer the attributes are formatted into, under one lock.
type output struct {
	mu  sync.Mutex
	w   io.Writer
	buf bytes.Buffer
}

// New returns a Handler writing to w; opts' Level applies (AddSource and
// ReplaceAttr too, for the attributes).
func New(w io.Writer, opts *slog.HandlerOptions) *Handler {
	var o slog.HandlerOptions
	if opts != nil {
		o = *opts
	}
	level := o.Level
	if level == nil {
		level = slog.LevelInfo
	}
	replace := o.ReplaceAttr
	o.Level = slog.LevelDebug - 100 // the outer handler decides
	o.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey) {
			return slog.Attr{}
		}
		if replace != nil {
			return replace(groups, a)
		}
		return a
	}
	out := &output{w: w}
	return &Handler{out: out, inner: slog.NewTextHandler(&out.buf, &o), level: level}
}

// Enabled reports whether l is at or above the handler's level.
func (h *Handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

// Handle writes r as one line.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	msg := r.Message
	r.Message = ""
	h.out.mu.Lock()
	defer h.out.mu.Unlock()
	h.out.buf.Reset()
	if err := h.inner.Handle(ctx, r); err != nil {
		return err
	}
	attrs := strings.TrimSpace(h.out.buf.String())
	var line strings.Builder
	line.WriteString(r.Level.String())
	line.WriteByte(' ')
	// One record, one line: a message's own line breaks are escaped.
	line.WriteString(strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(msg))
	if attrs != "" {
		line.WriteByte(' ')
		line.WriteString(attrs)
	}
	line.WriteByte('\n')
	_, err := io.WriteString(h.out.w, line.String())
	return err
}

// WithAttrs returns a handler that adds attrs to every record.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{out: h.out, inner: h.inner.WithAttrs(attrs), level: h.level}
}

// WithGroup returns a handler that puts later attributes in the group.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{out: h.out, inner: h.inner.WithGroup(name), level: h.level}
}
