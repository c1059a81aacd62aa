package mcp

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/freecode/freecode/internal/mcpwire"
)

// Turns at a server's stdout. The go-sdk reads a connection on a goroutine
// of its own, which wakes the goroutine of the call each answer is for.
// That wake is a goroutine hand-off per call, and on a machine with an
// idle core the runtime starts a second thread for it (a futex wake, and
// that thread spinning before it sleeps again): 14–17 µs of an echo call
// at p50 on the 2-core VM it was measured on
// (docs/upstream/go-sdk-reader-handoff.md). So a call waiting for its
// answer reads stdout itself, in Write, and returns with the answer read
// (stdioanswer.go): the only wake left is the kernel's, when the answer
// arrives, as for any blocking read.
//
// Only one goroutine reads at a time: whoever holds the turn. Between
// calls it is the SDK's reader, which must see what a server sends
// unasked (notifications, its own requests, the end of its stdout). A call
// that finds the reader in a read interrupts it with a read deadline,
// which the line reader survives without losing a byte
// (mcpwire.Interrupted); the reader then waits until no call has been in
// flight for turnGrace. It is not woken when a call ends, as that wake
// would cost the call as much as the hand-off did: calls that follow one
// another (a model's batch) keep the turn among them, and the reader takes
// it back after turnGrace. What a call reads that is not its answer (a
// notification, a request of the server's, another call's answer) it hands
// on: to the other call's slot, or to the SDK's reader through a queue,
// waking it. So what a server sends between calls waits at most
// turnGrace, and what it sends during one not at all.
//
// This needs a pipe that takes read deadlines (os.Pipe's read end on
// Unix); where it does not, the SDK's reader reads every message as
// before.

// turnGrace is how long after the last call's end the SDK's reader waits
// before it reads stdout again. Its timer wakes it once per turnGrace
// while calls follow one another: at 2 ms that cost 10 µs of CPU per echo
// call, at 10 ms it is lost in the noise, and what a server sends unasked
// between calls waits no longer than a scheduler's hiccup.
const turnGrace = 10 * time.Millisecond

// deadliner is a pipe whose reads a deadline interrupts.
type deadliner interface {
	SetReadDeadline(time.Time) error
}

// turns is the part of a stdioConn that shares the reading of stdout.
type turns struct {
	rd deadliner // stdout; nil if calls do not read it

	turn     chan struct{} // holds a token while someone reads the filter
	callers  atomic.Int32  // calls in Write that read their answers
	lastEnd  atomic.Int64  // when the last of them ended (monotonic, ns since turnEpoch)
	readerIn atomic.Bool   // the SDK's reader holds the turn to read
	cut      atomic.Bool   // a deadline interrupts reads until reset
	closing  atomic.Bool

	kick chan struct{} // wakes the SDK's reader: queued messages, or the close
	wait *time.Timer   // the SDK's reader's

	queueMu sync.Mutex
	queue   []queued // read by calls, for the SDK's reader, in order
}

// queued is a message a call read for the SDK's reader, or the read error
// that ends the connection.
type queued struct {
	msg jsonrpc.Message
	err error
}

var turnEpoch = time.Now()

func sinceEpoch() int64 { return int64(time.Since(turnEpoch)) }

func (t *turns) initTurns(rd deadliner) {
	t.turn = make(chan struct{}, 1)
	t.kick = make(chan struct{}, 1)
	if rd != nil && rd.SetReadDeadline(time.Time{}) == nil {
		t.rd = rd
	}
}

// interrupt ends any read of stdout in progress, and makes reads fail at
// once until resetDeadline.
func (t *turns) interrupt() {
	t.cut.Store(true)
	t.rd.SetReadDeadline(time.Unix(1, 0))
}

// resetDeadline lets reads wait again; whoever takes the turn calls it
// before reading.
func (t *turns) resetDeadline() {
	if t.rd != nil && t.cut.Swap(false) {
		t.rd.SetReadDeadline(time.Time{})
	}
}

// enqueue hands msg, or the read error, to the SDK's reader.
func (t *turns) enqueue(q queued) {
	t.queueMu.Lock()
	t.queue = append(t.queue, q)
	t.queueMu.Unlock()
	t.wake()
}

func (t *turns) wake() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

func (t *turns) dequeue() (queued, bool) {
	t.queueMu.Lock()
	defer t.queueMu.Unlock()
	if len(t.queue) == 0 {
		return queued{}, false
	}
	q := t.queue[0]
	t.queue[0] = queued{}
	t.queue = t.queue[1:]
	return q, true
}

// readerTurn takes the turn for the SDK's reader, unless calls have it or
// had it within turnGrace; it reports whether it did.
func (t *turns) readerTurn() bool {
	if t.rd != nil && !t.closing.Load() && (t.callers.Load() > 0 || sinceEpoch()-t.lastEnd.Load() < int64(turnGrace)) {
		return false
	}
	select {
	case t.turn <- struct{}{}:
	default:
		return false
	}
	t.resetDeadline()
	// A call counts itself before it looks whether the reader reads:
	// either it sees the reader in, and interrupts it, or the reader
	// sees the call here.
	t.readerIn.Store(true)
	if t.callers.Load() > 0 && !t.closing.Load() {
		t.readerIn.Store(false)
		<-t.turn
		return false
	}
	return true
}

// readerDone gives the turn back after the SDK's reader read.
func (t *turns) readerDone() {
	t.readerIn.Store(false)
	<-t.turn
}

// waitTurn waits until the SDK's reader may read again, or is kicked.
func (t *turns) waitTurn() {
	d := time.Duration(int64(turnGrace) - (sinceEpoch() - t.lastEnd.Load()))
	if d <= 0 || t.callers.Load() > 0 {
		d = turnGrace
	}
	if t.wait == nil {
		t.wait = time.NewTimer(d)
	} else {
		t.wait.Reset(d)
	}
	select {
	case <-t.kick:
		t.wait.Stop()
	case <-t.wait.C:
	}
}

// readAnswer is a call's Write after its request went out: it waits for
// its turn at stdout, or for another reader to read its answer, and reads
// until its answer came. It returns errAnswered with the answer in the
// slot; nil if the SDK is to decode the answer, or to end the call with
// the connection; ctx's error if the call was given up.
func (c *stdioConn) readAnswer(ctx context.Context, slot *answerSlot) error {
	if c.readerIn.Load() {
		c.interrupt()
	}
	select {
	case c.turn <- struct{}{}:
	case <-slot.done:
		return slot.outcome()
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-c.turn }()
	select {
	case <-slot.done: // read while this call waited for the turn
		return slot.outcome()
	default:
	}
	stop := context.AfterFunc(ctx, c.interrupt)
	defer stop()
	for {
		c.resetDeadline()
		if err := ctx.Err(); err != nil {
			return err
		}
		msg, batch, err := c.readLine()
		switch {
		case mcpwire.Interrupted(err):
			continue // ctx's, or a stray one of a call that saw the SDK's reader in
		case err != nil:
			c.enqueue(queued{err: err}) // the SDK's reader ends the session, and this call with it
			return nil
		}
		if batch == nil && msg != nil {
			batch = []jsonrpc.Message{msg}
		}
		mine := false
		for _, m := range batch {
			forSDK, answered := c.settle(m)
			switch {
			case answered == slot:
				mine = true
			case answered != nil && answered.done != nil:
				close(answered.done)
			}
			if forSDK != nil {
				c.enqueue(queued{msg: forSDK})
			}
		}
		if mine {
			return slot.outcome()
		}
	}
}

// outcome is what the call's Write returns once its answer was read:
// errAnswered, or nil when the answer went to the SDK.
func (s *answerSlot) outcome() error {
	if s.res != nil {
		return errAnswered
	}
	return nil
}
