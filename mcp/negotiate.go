package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/filelock"
)

// Protocol negotiation. An entry that pins no protocolVersion is offered
// the newest version the go-sdk speaks, 2026-07-28, whose first request is
// server/discover. A server that knows it answers and the session runs the
// stateless protocol; one that does not answers with an error (the
// TypeScript SDK: -32601 at once) and the go-sdk falls back to initialize
// at 2025-11-25 on the same connection. Some older servers never answer a
// request they do not know before initialize: the discovery gets
// discoveryWait(timeout) to be answered, then the go-sdk falls back all the
// same, so a connect never hangs on it. For a remote server that wait
// starts once the server answered the discovery's POST at the HTTP level
// (every HTTP server answers a POST; an old one with an error at once), so
// a server slow to read the request at all is waited for. A server that speaks only the
// newest may answer its discovery late (a loaded machine) and then refuse
// the fallback's initialize: a Conn's later attempts alternate between the
// two, and a one-shot Conn (NoRetry), which has no later attempt, makes one
// more at once whose discovery waits the whole connect.
//
// What it costs is paid once per entry: a fallback is remembered (see
// VersionMemo) and the next connects, of this process and of the next ones,
// go straight to initialize until the memory is a day old.

// LatestProtocolVersion is the newest MCP version FreeCode offers a server
// whose entry pins none.
const LatestProtocolVersion = "2026-07-28"

// methodDiscover is SEP-2575's discovery request.
const methodDiscover = "server/discover"

// maxDiscoveryWait bounds the discovery's wait for an answer: long enough
// for a server process to come up and answer, short enough that an old
// server that ignores the request costs little, once.
const maxDiscoveryWait = 2 * time.Second

// memoTTL is how long a fallback is remembered: a server that was updated
// to the newest protocol is found out within a day.
const memoTTL = 24 * time.Hour

// discoveryWait is how long server/discover may wait for an answer within a
// connect bounded by timeout: half of it, at most maxDiscoveryWait, so
// initialize and tools/list keep the other half.
func discoveryWait(timeout time.Duration) time.Duration {
	return min(timeout/2, maxDiscoveryWait)
}

// errNoDiscoverAnswer is the cause of a discovery that got no answer in
// time.
var errNoDiscoverAnswer = errors.New("no answer to " + methodDiscover)

// A discoveryProbe is one connect attempt's discovery: how long it may
// wait, and what it got. The attempt puts it in the context it connects
// with, where discoveryMiddleware finds it.
type discoveryProbe struct {
	wait time.Duration
	// begun, if set, is closed once the server reads its input: the wait
	// starts then. A package runner may take a minute to install the
	// server, and a discovery given up meanwhile is answered late, after
	// the fallback's initialize is sent, which a server that knows the
	// discovery then refuses as a second initialize.
	begun <-chan struct{}
	// untilHeard makes each discovery's wait start once the server
	// answered its POST at the HTTP level (the response's headers: the
	// answer itself, or the stream it comes on): a remote server. An
	// HTTP server answers every POST, an old one with an error at once,
	// so the wait is for a server that holds a stream open without
	// answering on it, not for a loaded machine, on which the request may
	// take seconds to be read (seen with the conformance suite's 32
	// scenarios at once: the fallback's initialize went out as the
	// discovery's answer came).
	untilHeard bool
	// failed, if set, is told that the discovery failed, before the go-sdk
	// falls back: a connect that can go no further (a sign-in is missing)
	// ends there instead of sending initialize to be refused again.
	failed func()

	mu         sync.Mutex
	sent       bool
	unanswered bool   // given up: no answer within wait
	why        string // why the discovery did not give the newest version, or ""
	// held counts the sign-ins under way (hold): the wait starts again in
	// full once they end, as the answer a sign-in holds up is the
	// server's only after it, and one that runs out meanwhile waits for
	// that.
	held  int
	late  bool
	timer *time.Timer // the running wait, once armed
}

// hold pauses the wait for the discovery's answer while the user signs in
// (oauth.FlowConfig.OnSignIn); the func it returns resumes it.
func (p *discoveryProbe) hold() (release func()) {
	p.mu.Lock()
	p.held++
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.held--
			if p.held == 0 && p.timer != nil && (p.late || p.timer.Stop()) {
				p.late = false
				p.timer.Reset(p.wait)
			}
		})
	}
}

// arm starts the wait: giveUp runs once it runs out, unless a sign-in
// holds it then.
func (p *discoveryProbe) arm(giveUp func()) *time.Timer {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timer = time.AfterFunc(p.wait, func() {
		p.mu.Lock()
		if p.held > 0 {
			p.late = true
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		giveUp()
	})
	return p.timer
}

type probeKey struct{}

// fellBack returns why the discovery did not bring the newest protocol; ""
// if it was not sent (or brought it).
func (p *discoveryProbe) fellBack() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.why
}

func (p *discoveryProbe) record(res mcpsdk.Result, err, cause error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = true
	switch {
	case errors.Is(cause, errNoDiscoverAnswer):
		p.unanswered = true
		p.why = fmt.Sprintf("%s within %v", errNoDiscoverAnswer, p.wait)
	case err != nil:
		msg := err.Error()
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			msg = werr.Message // without the go-sdk's "calling ..." prefix
		}
		p.why = fmt.Sprintf("%s: %s", methodDiscover, msg)
	default:
		// The go-sdk falls back when the versions offered leave out every
		// version from the newest on; the result says which they were.
		if dr, ok := res.(*mcpsdk.DiscoverResult); ok && !slices.ContainsFunc(dr.SupportedVersions, func(v string) bool { return v >= LatestProtocolVersion }) {
			p.why = fmt.Sprintf("%s: the server offers %s", methodDiscover, strings.Join(dr.SupportedVersions, ", "))
		}
	}
}

// afterBegun calls give up p.wait after begun is closed (nil: at once),
// unless the returned stop is called first or ctx ends.
func (p *discoveryProbe) afterBegun(ctx context.Context, begun <-chan struct{}, giveUp func()) (stop func()) {
	if begun == nil {
		t := p.arm(giveUp)
		return func() { t.Stop() }
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-begun:
		case <-done:
			return
		case <-ctx.Done():
			return
		}
		t := p.arm(giveUp)
		defer t.Stop()
		select {
		case <-done:
		case <-ctx.Done():
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// heard is closed once the server answered a discovery's POST (see
// discoveryProbe.untilHeard); the round tripper finds it in the
// request's context.
type heard struct {
	once sync.Once
	ch   chan struct{}
}

type heardKey struct{}

// noteHeard tells the discovery whose request ctx carries, if any, that
// the server answered it.
func noteHeard(ctx context.Context) {
	if h, ok := ctx.Value(heardKey{}).(*heard); ok {
		h.once.Do(func() { close(h.ch) })
	}
}

// discoveryMiddleware is the client's sending middleware that bounds
// server/discover by the wait of the attempt's probe and records what it
// got. A discovery that times out returns the context's error, on which the
// go-sdk falls back to initialize (which the attempt's own deadline
// bounds). Once the attempt's context is done it lets nothing more out.
func discoveryMiddleware(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		p, _ := ctx.Value(probeKey{}).(*discoveryProbe)
		if p == nil {
			return next(ctx, method, req)
		}
		if method != methodDiscover {
			if ctx.Err() != nil {
				// The attempt was given up (a discovery that found a
				// sign-in missing aborts it), yet the go-sdk falls back
				// to initialize: given a done context it sends no request
				// but a notifications/cancelled for it, one more request
				// the server refuses as it refused the discovery.
				return nil, context.Cause(ctx)
			}
			return next(ctx, method, req)
		}
		dctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		begun := p.begun
		if p.untilHeard {
			h := &heard{ch: make(chan struct{})}
			dctx = context.WithValue(dctx, heardKey{}, h)
			begun = h.ch
		}
		stop := p.afterBegun(ctx, begun, func() { cancel(errNoDiscoverAnswer) })
		defer stop()
		res, err := next(dctx, method, req)
		p.record(res, err, context.Cause(dctx))
		if err != nil && p.failed != nil {
			p.failed()
		}
		return res, err
	}
}

// sessionVersion picks the version an attempt offers: the entry's pin, else
// the fallback when the memo (or an earlier attempt of this Conn) says the
// server does not take the newest, else the newest, with the probe that
// bounds its discovery. An attempt that signs in offers the newest too (a
// server may speak nothing else): the sign-in in the browser holds the
// probe's wait (discoveryProbe.hold), so the user's time is not the
// server's.
func (c *Conn) sessionVersion(srv config.Server) (string, *discoveryProbe) {
	if srv.ProtocolVersion != "" {
		return srv.ProtocolVersion, nil
	}
	c.mu.Lock()
	skip := c.skipDiscovery
	c.mu.Unlock()
	if skip || c.versions.fellBack(c.srv) {
		return config.DefaultProtocolVersion, nil
	}
	c.mu.Lock()
	patient := c.patient
	c.mu.Unlock()
	if patient {
		// The go-sdk's fallback then comes only at the attempt's end.
		return LatestProtocolVersion, &discoveryProbe{wait: srv.Timeout}
	}
	return LatestProtocolVersion, &discoveryProbe{wait: discoveryWait(srv.Timeout)}
}

// noteNegotiation learns from an attempt that offered version. A connect
// that fell back is remembered for the entry; one that failed after a
// discovery that did not bring the newest version makes this Conn's next
// attempt skip the discovery (a server may break on a request it does not
// know), and is remembered once one of them connects; the attempts then
// alternate until one does. ctx is the
// attempt's, which bounds the memo's wait for its file.
func (c *Conn) noteNegotiation(ctx context.Context, p *discoveryProbe, version string, s *session, connectErr error) {
	if c.srv.ProtocolVersion != "" {
		return
	}
	c.mu.Lock()
	skipped := c.skipDiscovery
	c.unanswered = false
	if p != nil && connectErr != nil {
		p.mu.Lock()
		c.unanswered = p.unanswered
		p.mu.Unlock()
	}
	c.mu.Unlock()
	var why string
	switch {
	case p != nil:
		why = p.fellBack()
	case skipped:
		why = "a connect that offered " + LatestProtocolVersion + " failed"
	}
	if why == "" {
		return
	}
	if connectErr != nil {
		// After a discovery that did not bring the newest version, the
		// next attempt offers the fallback; after a fallback that failed
		// too, the newest again: a server that speaks nothing older may
		// only have answered its discovery late (a loaded machine).
		c.mu.Lock()
		c.skipDiscovery = !skipped
		c.mu.Unlock()
		return
	}
	got := ""
	if ir := s.cs.InitializeResult(); ir != nil {
		got = ir.ProtocolVersion
	}
	if got >= LatestProtocolVersion {
		return
	}
	if err := c.versions.remember(ctx, c.srv, got, why); err != nil {
		// The connect stands; the next one runs the discovery again.
		c.logger.Warn("the server does not take the newest protocol; not remembered", "offered", version, "negotiated", got, "why", why, "error", err)
		return
	}
	c.logger.Info("the server does not take the newest protocol; remembered", "offered", version, "negotiated", got, "why", why)
}

// VersionMemoFile is the name of the memo's file, beside the config file.
const VersionMemoFile = "protocol-versions.json"

// A VersionMemo remembers which server entries fell back from the newest
// protocol, so that their next connects skip the discovery. Entries are
// known by a hash of what runs (type, command, cwd, url, transport), never
// by their secrets. With a path the memory is a 0600 JSON file shared by
// every FreeCode process (the CLI's one-shot commands connect afresh each
// time: a memory of the process alone would make each pay the wait);
// without, it lasts as long as the memo. Its methods are safe for
// concurrent use.
type VersionMemo struct {
	path string
	now  func() time.Time

	// mu guards entries, the memory of a memo without a path and the
	// cache of the file's.
	mu      sync.Mutex
	entries map[string]memoEntry
	loaded  bool
}

// memoEntry is one remembered fallback.
type memoEntry struct {
	Version string    `json:"version"` // what the server negotiated instead
	Why     string    `json:"why"`
	At      time.Time `json:"at"`
}

// memoFile is the file's content.
type memoFile struct {
	Version int                  `json:"version"`
	Entries map[string]memoEntry `json:"entries"`
}

// NewVersionMemo returns a memo kept in the file at path (created when
// first needed, mode 0600), or in memory alone if path is "".
func NewVersionMemo(path string) *VersionMemo {
	return &VersionMemo{path: path, now: time.Now, entries: map[string]memoEntry{}}
}

// memoKey is the hash of what decides which server answers: not the name,
// nor env or header values.
func memoKey(srv config.Server) string {
	b, _ := json.Marshal(struct {
		Type, Cwd, URL, Transport string
		Command                   []string
	}{srv.Type, srv.Cwd, srv.URL, srv.Transport, srv.Command}) // cannot fail: strings only
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// fellBack reports whether srv is remembered as not taking the newest
// protocol, within memoTTL. A nil memo remembers nothing.
func (m *VersionMemo) fellBack(srv config.Server) bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.path != "" && !m.loaded {
		// A file that does not read is no memory: the discovery runs again.
		m.entries, _ = readMemo(m.path)
		m.loaded = true
	}
	e, ok := m.entries[memoKey(srv)]
	return ok && m.now().Sub(e.At) < memoTTL
}

// memoLockWait bounds how long remembering a fallback waits for the memo
// file's lock. The memo only spares later connects a wait; a connect that
// is done must not be held up by another process sitting on the lock (the
// lock is the directory's, shared with every file beside the memo).
const memoLockWait = 500 * time.Millisecond

// remember records that srv fell back to version, and why. ctx, and
// memoLockWait, bound the wait for the file's lock; a memo that could not
// be written remembers nothing (the file is the memory).
func (m *VersionMemo) remember(ctx context.Context, srv config.Server, version, why string) error {
	if m == nil {
		return nil
	}
	now := m.now()
	e := memoEntry{Version: version, Why: why, At: now}
	if m.path == "" {
		m.mu.Lock()
		m.entries[memoKey(srv)] = e
		m.mu.Unlock()
		return nil
	}
	// Another process may have written meanwhile: read, add, write, under
	// the lock every writer of the file takes. mu is not held meanwhile:
	// every connect's fellBack needs it, and the file lock serializes the
	// writers of this process too.
	if err := os.MkdirAll(filepath.Dir(m.path), 0o700); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, memoLockWait)
	defer cancel()
	lock, err := filelock.Acquire(ctx, m.path)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	entries, err := readMemo(m.path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		entries = nil // unreadable: start it again
	}
	if entries == nil {
		entries = map[string]memoEntry{}
	}
	for k, old := range entries {
		if now.Sub(old.At) >= memoTTL {
			delete(entries, k)
		}
	}
	entries[memoKey(srv)] = e
	b, err := json.MarshalIndent(memoFile{Version: 1, Entries: entries}, "", "  ")
	if err != nil {
		return err
	}
	if err := config.WriteFileAtomic(m.path, append(b, '\n'), 0o600); err != nil {
		return err
	}
	m.mu.Lock()
	m.entries, m.loaded = entries, true
	m.mu.Unlock()
	return nil
}

func readMemo(path string) (map[string]memoEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return map[string]memoEntry{}, err
	}
	var f memoFile
	if err := json.Unmarshal(b, &f); err != nil || f.Entries == nil {
		return map[string]memoEntry{}, fmt.Errorf("%s: not a memo of protocol versions", path)
	}
	return f.Entries, nil
}
