package protocol

import (
	"errors"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// hangGuard only keeps a broken test from hanging; no test depends on it.
const hangGuard = 60 * time.Second

// conn is a connection whose reads come from r; writes are dropped.
type conn struct{ io.Reader }

func (conn) Write(p []byte) (int, error) { return len(p), nil }
func (conn) Close() error                { return nil }

// allocated returns the bytes f allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// repeat is a reader of n bytes of b, made as they are read.
type repeat struct {
	b    byte
	n    int
	read int // bytes read so far
}

func (r *repeat) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	p = p[:min(len(p), r.n)]
	for i := range p {
		p[i] = r.b
	}
	r.n -= len(p)
	r.read += len(p)
	return len(p), nil
}

// A frame that announces more than the cap is refused before any of its
// body is read, and costs nothing near what it announced: a gigabyte
// announced by anyone who can connect must not be a gigabyte allocated.
func TestFrameOverCapAllocatesNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit func() int
	}{
		{"handshake cap", func() int { return 64 << 10 }},
		{"default cap", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := &repeat{b: ' ', n: 10 << 20}
			s := NewStream(conn{io.MultiReader(strings.NewReader("Content-Length: 1000000000\r\n\r\n"), body)}, &StreamOptions{MaxFrame: tc.limit})
			var err error
			n := allocated(func() { _, _, err = s.(frameStream).ReadFrame(t.Context()) })
			if !errors.Is(err, ErrFrameTooLarge) {
				t.Errorf("ReadFrame: %v, want ErrFrameTooLarge", err)
			}
			if n > 1<<20 {
				t.Errorf("refusing the frame allocated %d bytes", n)
			}
			if body.read != 0 {
				t.Errorf("%d bytes of the body were read", body.read)
			}
		})
	}
}

// A frame under the cap whose body never comes costs what came, not what
// was announced: a body buffer grows as its bytes arrive.
func TestFrameBodyGrowsWithWhatArrives(t *testing.T) {
	s := NewStream(conn{strings.NewReader("Content-Length: 60000000\r\n\r\n{\"jsonrpc\"")}, nil)
	var err error
	n := allocated(func() { _, _, err = s.(frameStream).ReadFrame(t.Context()) })
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("ReadFrame: %v, want io.ErrUnexpectedEOF", err)
	}
	if n > 1<<20 {
		t.Errorf("a frame announcing 60 MB of which 10 bytes came allocated %d bytes", n)
	}
}

// A header line that never ends is refused once the header reaches
// MaxHeader: neither buffered nor read further.
func TestHeaderLineCap(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prefix string
	}{
		{"one endless line", ""},
		{"endless lines", strings.Repeat("X-Pad: 0123456789\r\n", 1000)},
		{"after a length", "Content-Length: 2\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			endless := &repeat{b: 'a', n: 64 << 20}
			s := NewStream(conn{io.MultiReader(strings.NewReader(tc.prefix), endless)}, nil)
			var err error
			n := allocated(func() { _, _, err = s.(frameStream).ReadFrame(t.Context()) })
			if !errors.Is(err, ErrHeaderTooLong) {
				t.Errorf("ReadFrame: %v, want ErrHeaderTooLong", err)
			}
			if endless.read > MaxHeader {
				t.Errorf("%d bytes of the endless line were read", endless.read)
			}
			if n > 1<<20 {
				t.Errorf("refusing the header allocated %d bytes", n)
			}
		})
	}
}

// Frames within the caps read as LSP has them: other header fields
// ignored, the field's name in any case, bare newlines taken; the cap is
// asked again for each frame, so that initialize can raise it.
func TestFrames(t *testing.T) {
	big := `{"jsonrpc":"2.0","method":"m","params":"` + strings.Repeat("x", 200<<10) + `"}`
	in := "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}" +
		"content-length:3\n\n[1]" +
		"Content-Length: " + strconv.Itoa(len(big)) + "\r\n\r\n" + big +
		"Content-Length: " + strconv.Itoa(len(big)) + "\r\n\r\n" + big
	limits := []int{10, 10, 1 << 20, 100 << 10}
	calls := 0
	s := NewStream(conn{strings.NewReader(in)}, &StreamOptions{MaxFrame: func() int { calls++; return limits[calls-1] }})
	for i, want := range []string{"{}", "[1]", big} {
		body, _, err := s.(frameStream).ReadFrame(t.Context())
		if err != nil || string(body) != want {
			t.Fatalf("frame %d: %.40q, %v; want %.40q", i, body, err, want)
		}
	}
	if _, _, err := s.(frameStream).ReadFrame(t.Context()); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("the last frame, over the lowered cap: %v", err)
	}
	huge := NewStream(conn{strings.NewReader("Content-Length: 99999999999999999999999\r\n\r\n{}")}, nil)
	if _, _, err := huge.(frameStream).ReadFrame(t.Context()); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("a length past any int: %v, want ErrFrameTooLarge", err)
	}
	for _, bad := range []string{"Content-Length: 0\r\n\r\n", "Content-Length: -1\r\n\r\n", "Content-Length: 1x\r\n\r\n", "Content-Type: a\r\n\r\n{}", "no colon\r\n\r\n"} {
		s := NewStream(conn{strings.NewReader(bad)}, nil)
		if _, _, err := s.(frameStream).ReadFrame(t.Context()); !errors.Is(err, jsonrpc2.ErrInvalidHeader) {
			t.Errorf("%q: %v, want ErrInvalidHeader", bad, err)
		}
	}
}

// blockedConn is a connection nobody reads: its first Write says it
// began, then waits until release is closed.
type blockedConn struct {
	net.Conn
	began   chan struct{}
	release chan struct{}
}

func (c *blockedConn) Write(p []byte) (int, error) {
	select {
	case c.began <- struct{}{}:
	default:
	}
	<-c.release
	return len(p), nil
}

// A write made while MaxPendingWrites others wait fails at once, and
// OnWriteBacklog is called, once: a peer that reads nothing holds no more
// than that many messages and goroutines.
func TestWriteBacklog(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := &blockedConn{Conn: a, began: make(chan struct{}, 1), release: make(chan struct{})}
	backlogs := 0
	s := NewStream(c, &StreamOptions{MaxPendingWrites: 1, OnWriteBacklog: func() { backlogs++ }})
	first := make(chan error, 1)
	go func() {
		_, err := s.Write(t.Context(), jsonrpc2.NewNotification("first", nil))
		first <- err
	}()
	<-c.began
	for i := range 2 {
		more := make(chan error, 1)
		go func() {
			_, err := s.Write(t.Context(), jsonrpc2.NewNotification("more", nil))
			more <- err
		}()
		select {
		case err := <-more:
			if !errors.Is(err, ErrWriteBacklog) {
				t.Errorf("write %d while one waits: %v, want ErrWriteBacklog", i, err)
			}
		case <-time.After(hangGuard):
			close(c.release)
			t.Fatalf("write %d waits behind the first: nothing bounds the backlog", i)
		}
	}
	if backlogs != 1 {
		t.Errorf("OnWriteBacklog called %d times, want 1", backlogs)
	}
	close(c.release)
	if err := <-first; err != nil {
		t.Errorf("the first write: %v", err)
	}
	if _, err := s.Write(t.Context(), jsonrpc2.NewNotification("after", nil)); err != nil {
		t.Errorf("a write once none waits: %v", err)
	}
}
