package mcp

import "sync"

// maxTailLines bounds the stderr tail kept for Status; proc cuts each line
// to proc.MaxLine bytes.
const maxTailLines = 50

// tailBuffer keeps the last maxTailLines lines of a server's stderr.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
	added int // lines ever added
}

func (t *tailBuffer) add(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.added++
	if len(t.lines) == maxTailLines {
		copy(t.lines, t.lines[1:])
		t.lines = t.lines[:maxTailLines-1]
	}
	t.lines = append(t.lines, s)
}

// count returns how many lines were ever added, for since.
func (t *tailBuffer) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.added
}

// since returns the lines kept that were added after count returned n.
func (t *tailBuffer) since(n int) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := min(t.added-n, len(t.lines))
	return append([]string(nil), t.lines[len(t.lines)-k:]...)
}

func (t *tailBuffer) snapshot() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return nil
	}
	return append([]string(nil), t.lines...)
}

// noteStderr keeps a line of the server's stderr, masked already, in the
// tail and hands it to the Conn's log subscribers.
func (c *Conn) noteStderr(line string) {
	if line == "" {
		return
	}
	c.tail.add(line)
	c.emitLog(LogStderr, "", line)
	c.logger.Debug("server stderr", "line", line)
}
