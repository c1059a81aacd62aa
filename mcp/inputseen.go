package mcp

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/freecode/freecode/mcp/proc"
)

// A local server's discovery waits for its answer from when the server
// has read the request, not from when it was written: a server slow to
// come up (node loading its bundle, Python its imports, on a loaded
// machine, 2 s and more) is then not taken for one that ignores
// server/discover, and is not sent the fallback's initialize behind a
// discovery it answers late, which a server that knows the discovery
// refuses as a second initialize. A package runner's connect sees the
// same reads to tell installing from running (runner.go). Where a pipe's
// writer cannot see what is still unread (seesUnreadInput false), the wait
// runs from the write.

// inputPoll is how often a connect looks whether the server has read what
// was written to it.
const inputPoll = 100 * time.Millisecond

// inputSeenKey is the context key of a local connect's inputSeen, for a
// server that is not run by a package runner (whose installWait has one).
type inputSeenKey struct{}

// inputSeen tells when a server process has first read all that was
// written to it: begun is closed then.
type inputSeen struct {
	written atomic.Int64 // bytes written to the server
	begun   chan struct{}
	once    sync.Once
}

func newInputSeen() *inputSeen { return &inputSeen{begun: make(chan struct{})} }

// input returns stdin counting what is written to it.
func (s *inputSeen) input(stdin io.WriteCloser) io.WriteCloser {
	s.written.Store(0) // a new process: nothing written to it yet
	return &countingWriter{WriteCloser: stdin, n: &s.written}
}

// look reports whether p has read everything written to it, something
// having been written; the first time it has, begun is closed.
func (s *inputSeen) look(p *proc.Process) bool {
	n, ok := unreadInput(p.Stdin())
	if s.written.Load() == 0 || !ok || n > 0 {
		return false
	}
	s.once.Do(func() { close(s.begun) })
	return true
}

// follow looks every inputPoll until p has read its input, exited, or ctx
// ended; wg counts the goroutine that looks.
func (s *inputSeen) follow(ctx context.Context, p *proc.Process, wg *sync.WaitGroup) {
	wg.Go(func() {
		t := time.NewTicker(inputPoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-p.Exited():
				return
			case <-t.C:
			}
			if s.look(p) {
				return
			}
		}
	})
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	io.WriteCloser
	n *atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.WriteCloser.Write(p)
	c.n.Add(int64(n))
	return n, err
}
