package plainlog

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Each record is one line, its level first, no time.
func TestHandler(t *testing.T) {
	var b bytes.Buffer
	logger := slog.New(New(&b, &slog.HandlerOptions{Level: slog.LevelInfo}))
	logger.Debug("not shown")
	logger.Info("config file fixed", "file", "/home/me/.freecode/config.json")
	srv := logger.With("server", "gh")
	srv.Warn("first connect failed; retrying", "error", "exited with code 3: error: GITHUB_TOKEN is not set")
	srv.WithGroup("conn").Error("two\nlines", "n", 2)
	logger.Info("no attributes")
	want := `INFO config file fixed file=/home/me/.freecode/config.json
WARN first connect failed; retrying server=gh error="exited with code 3: error: GITHUB_TOKEN is not set"
ERROR two\nlines server=gh conn.n=2
INFO no attributes
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestNewHandler(t *testing.T) {
	var b bytes.Buffer
	for _, f := range []string{FormatAuto, FormatPlain} {
		h, err := NewHandler(&b, f, nil)
		if _, ok := h.(*Handler); err != nil || !ok {
			t.Errorf("%s on a buffer: %T, %v; want the plain handler", f, h, err)
		}
	}
	if h, err := NewHandler(&b, FormatText, nil); err != nil {
		t.Errorf("text: %v", err)
	} else if _, ok := h.(*slog.TextHandler); !ok {
		t.Errorf("text: %T", h)
	}
	if _, err := NewHandler(&b, "json", nil); err == nil {
		t.Error("an unknown format was taken")
	}
}
