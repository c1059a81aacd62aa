package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/audit"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/mcp/oauth"
	"github.com/freecode/freecode/permissions"
)

// ErrAwaitingApproval means a project server cannot start: the user has not
// approved its entry (Approve).
var ErrAwaitingApproval = errors.New("project server awaiting approval")

// settleGrace is what WaitSettled allows beyond a server's own timeout: its
// process's start-up and, after a failed connect, its reaping.
const settleGrace = 2 * time.Second

// applyServers gives the Manager the servers to run: the organization's,
// the user's, then the project's approved ones, each held to the managed
// sandbox minimum. A server the managed policy blocks is not run and
// shows as blocked; a project server the user has not approved is not
// run and shows as awaiting approval; a server whose name an earlier
// scope uses is shadowed by it. The caller holds reloadMu.
func (w *Workspace) applyServers(ctx context.Context, cfg *config.Config, project []config.Server, pol policy) {
	lookup := w.lookupEnv()
	var servers []config.Server
	pending := make(map[string]config.Server)
	blocked := make(map[string]blockedServer)
	taken := make(map[string]bool)
	ids := make(map[string]string)
	var shipped []config.Server
	if pol.m != nil {
		shipped = pol.m.Servers
	}
	for _, group := range [][]config.Server{shipped, cfg.MCP.Servers, project} {
		for _, s := range group {
			if taken[s.Name] {
				if s.Scope == config.ScopeUser {
					w.logger.Warn("a server of your config is shadowed by your organization's server of that name", "server", s.Name)
				}
				continue
			}
			taken[s.Name] = true
			switch why := pol.block(s, lookup); {
			case why != nil:
				blocked[s.Name] = blockedServer{s, why}
			case s.Scope == config.ScopeProject && !cfg.Approved(config.ApprovalKey(w.root, s)):
				pending[s.Name] = s
			default:
				ids[s.Name] = config.EntryHash(s)
				if held, changed := pol.m.HoldSandbox(s); changed {
					w.logger.Info("the server's sandbox is held to your organization's minimum", "server", s.Name)
					s = held
				}
				servers = append(servers, s)
			}
		}
	}
	w.identities.Store(&ids)
	var running []config.Server
	managed := make(map[string]bool)
	for _, s := range servers {
		if w.want(s.Name) {
			running = append(running, s)
			managed[s.Name] = true
		}
	}
	running = w.startModes(cfg, running)

	w.mu.Lock()
	var evs []Event
	for name, s := range pending {
		if old, ok := w.pending[name]; !ok || !old.Equal(s) {
			evs = append(evs, &StatusEvent{Status: w.awaitingStatus(s)})
		}
	}
	for name, b := range blocked {
		if old, ok := w.blocked[name]; !ok || !old.srv.Equal(b.srv) || *old.why != *b.why {
			evs = append(evs, &StatusEvent{Status: b.status()})
			w.logger.Warn("server blocked", "server", name, "why", b.why.String())
			w.trail.record(audit.Event{Kind: audit.KindBlocked, Server: name, Detail: b.why.String()})
		}
	}
	// A server in no list now is gone: its removal is its last word,
	// and onStatus drops what its Conn says as it stops.
	gone := func(s config.Server) {
		_, still := pending[s.Name]
		_, isBlocked := blocked[s.Name]
		if !still && !isBlocked && !managed[s.Name] {
			evs = append(evs, &StatusEvent{Status: mcp.StatusOf(s, mcp.StateStopped), Removed: true})
		}
	}
	for _, s := range w.pending {
		gone(s)
	}
	for _, b := range w.blocked {
		gone(b.srv)
	}
	for _, s := range w.running {
		gone(s)
	}
	w.pending, w.blocked, w.managed, w.running = pending, blocked, managed, running
	w.events.publish(evs...)
	w.mu.Unlock()

	// After the maps above: a server the Manager now stops reports its
	// last status as awaiting approval, if that is what it is. What the
	// files say is put in force whatever becomes of the request that
	// caused the reload (Approve's, SetTrusted's): its cancellation does
	// not keep the Manager from being given the servers.
	if err := w.mgr.Apply(context.WithoutCancel(ctx), running); err != nil {
		w.logger.Error("applying the servers", "error", err)
	}
	// Pinning turned on or off does not restart a server: its tools are
	// registered anew.
	w.pins.applyPinning(running)
}

// onStatus is the Manager's report of a server's new status, from a Conn
// goroutine.
func (w *Workspace) onStatus(st mcp.Status) {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.settled.wake()
	if !w.managed[st.Name] {
		if b, ok := w.blocked[st.Name]; ok {
			// Stopped because the policy now blocks it.
			w.events.publish(&StatusEvent{Status: b.status()})
			return
		}
		s, ok := w.pending[st.Name]
		if !ok {
			// Its entry was removed, which applyServers published: what
			// its Conn says while it stops would bring it back.
			return
		}
		// A server stopped because its approval went (revoked, or its
		// entry changed): what the user must do next is approve it.
		st = w.awaitingStatus(s)
	}
	w.events.publish(&StatusEvent{Status: st})
}

// awaitingStatus is the status of the project server s awaiting approval:
// the entry it would run and, from its manifest, the definitions it listed
// when it last ran that still await review, so that a re-approval shows
// them beside the entry.
func (w *Workspace) awaitingStatus(s config.Server) mcp.Status {
	st := mcp.StatusOf(s, mcp.StateAwaitingApproval)
	if st.Approval == nil {
		return st
	}
	if m, ok := w.pins.hasManifest(s); ok {
		st.Approval.Pending = m.Pending()
	}
	return st
}

// settleSignal is what WaitSettled waits on: woken on every status and
// registry change.
type settleSignal struct {
	// mu guards ch, which is closed and replaced by wake.
	mu sync.Mutex
	ch chan struct{}
}

// wake wakes the waiters of WaitSettled: a status or the registry changed.
func (s *settleSignal) wake() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
	}
	s.ch = make(chan struct{})
}

// next returns what the next wake closes.
func (s *settleSignal) next() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// Statuses returns the status of every server, by name: those the Manager
// runs (or keeps disabled), the project's servers awaiting approval and
// the servers the managed policy blocks.
func (w *Workspace) Statuses() []mcp.Status {
	run := w.mgr.Statuses()
	w.mu.Lock()
	out := make([]mcp.Status, 0, len(run)+len(w.pending)+len(w.blocked))
	for _, st := range run {
		_, pending := w.pending[st.Name]
		_, blocked := w.blocked[st.Name]
		if !pending && !blocked || w.managed[st.Name] {
			out = append(out, st)
		}
	}
	for _, s := range w.pending {
		if !w.managed[s.Name] {
			out = append(out, w.awaitingStatus(s))
		}
	}
	for _, b := range w.blocked {
		if !w.managed[b.srv.Name] {
			out = append(out, b.status())
		}
	}
	w.mu.Unlock()
	slices.SortFunc(out, func(a, b mcp.Status) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// status returns the named server's status.
func (w *Workspace) status(name string) (mcp.Status, bool) {
	for _, st := range w.Statuses() {
		if st.Name == name {
			return st, true
		}
	}
	return mcp.Status{}, false
}

// HasServer reports whether Statuses lists the named server, without
// building every server's status to find out.
func (w *Workspace) HasServer(name string) bool {
	w.mu.Lock()
	_, pending := w.pending[name]
	_, blocked := w.blocked[name]
	pending = (pending || blocked) && !w.managed[name]
	w.mu.Unlock()
	if pending {
		return true
	}
	_, ok := w.mgr.Conn(name)
	return ok
}

// ErrBlocked means the organization's managed policy does not let the
// server run; the error's text says why and where.
var ErrBlocked = errors.New("blocked by your organization's policy")

// awaiting returns the error for a server awaiting approval or blocked by
// the policy, if name is one.
func (w *Workspace) awaiting(name string) (mcp.Status, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if b, ok := w.blocked[name]; ok && !w.managed[name] {
		return b.status(), &blockedError{name: name, why: b.why}
	}
	if s, ok := w.pending[name]; ok && !w.managed[name] {
		return w.awaitingStatus(s), fmt.Errorf("%w: %q (approve it first)", ErrAwaitingApproval, name)
	}
	return mcp.Status{}, nil
}

// StartServer connects the named server if it is not connected (a disabled
// one too: the user asked) and returns its status once it is connected or
// failed, within its timeout.
func (w *Workspace) StartServer(ctx context.Context, name string) (mcp.Status, error) {
	if st, err := w.awaiting(name); err != nil {
		return st, err
	}
	return w.mgr.Start(ctx, name)
}

// StopServer stops the named server and returns its status.
func (w *Workspace) StopServer(ctx context.Context, name string) (mcp.Status, error) {
	if st, err := w.awaiting(name); err != nil {
		return st, err
	}
	return w.mgr.Stop(ctx, name)
}

// RestartServer stops the named server and starts it again, returning its
// status once it is connected or failed.
func (w *Workspace) RestartServer(ctx context.Context, name string) (mcp.Status, error) {
	if st, err := w.awaiting(name); err != nil {
		return st, err
	}
	return w.mgr.Restart(ctx, name)
}

// Login signs in to the named remote server (OAuth): the authorization URL
// goes to open (nil: the system browser), and once the user has consented
// the server connects. It returns the server's status then.
func (w *Workspace) Login(ctx context.Context, name string, open oauth.OpenURLFunc) (mcp.Status, error) {
	if st, err := w.awaiting(name); err != nil {
		return st, err
	}
	return w.mgr.Login(ctx, name, open)
}

// Logout stops the named server and forgets its sign-in, whose tokens the
// authorization server is asked to revoke (see mcp.Manager.Logout).
func (w *Workspace) Logout(ctx context.Context, name string) (mcp.Status, error) {
	if st, err := w.awaiting(name); err != nil {
		return st, err
	}
	return w.mgr.Logout(ctx, name)
}

// ErrEntryChanged means Approve was given the hash of an entry that the
// project's file no longer holds: the project changed the server after the
// user was shown it. Nothing was approved.
var ErrEntryChanged = errors.New("the project server's entry changed since it was shown")

// Approve approves (or, with approve false, revokes) the project server
// name: the approval of that exact entry is written to the user's config
// and applied at once. entryHash is the hash of the entry the user was
// shown (mcp.Approval.EntryHash): required to approve, and checked when
// given to revoke. The entry is read from the file first, and one that
// hashes otherwise now is ErrEntryChanged, with nothing written, so that a
// project cannot swap the entry while the user reads it. An approved,
// enabled server starts; Approve returns its status once it is connected
// or failed. A revoked one stops and awaits approval again.
func (w *Workspace) Approve(ctx context.Context, name string, approve bool, entryHash string) (mcp.Status, error) {
	if w.root == "" {
		return mcp.Status{}, errors.New("approving a project server: the workspace has no project")
	}
	if approve {
		w.mu.Lock()
		b, blocked := w.blocked[name]
		w.mu.Unlock()
		if blocked {
			return b.status(), &blockedError{name: name, why: b.why}
		}
	}
	if approve && entryHash == "" {
		return mcp.Status{}, fmt.Errorf("approving project server %q: the hash of the entry the user was shown is required", name)
	}
	// The file as it is now, not as the watcher last reported it: a
	// change it has not reported yet must not pass for what was shown.
	w.reload(ctx, kindProject)
	w.mu.Lock()
	cfg := w.cfg
	i := slices.IndexFunc(w.project, func(s config.Server) bool { return s.Name == name })
	var srv config.Server
	if i >= 0 {
		srv = w.project[i]
	}
	w.mu.Unlock()
	if i < 0 {
		return mcp.Status{}, fmt.Errorf("%w: %s has no server %q", mcp.ErrNoServer, config.ProjectSettingsPath(w.root), name)
	}
	if _, shadowed := cfg.Server(name); shadowed {
		return mcp.Status{}, fmt.Errorf("project server %q is shadowed by the server of that name in %s", name, w.files.config)
	}
	if entryHash != "" && config.EntryHash(srv) != entryHash {
		st, _ := w.status(name)
		return st, fmt.Errorf("%w: %q in %s (read it again and approve what it says now)", ErrEntryChanged, name, config.ProjectSettingsPath(w.root))
	}
	// The key of the entry just read, whose hash is the one shown: a
	// change from here on makes another entry, which this does not
	// approve.
	key := config.ApprovalKey(w.root, srv)
	edit, verb := config.Approve, "approving"
	if !approve {
		edit, verb = config.Unapprove, "revoking"
	}
	if err := edit(w.files.config, key); err != nil {
		return mcp.Status{}, fmt.Errorf("%s project server %q: %w", verb, name, err)
	}
	w.trail.record(audit.Event{Kind: audit.KindApproval, Server: name, ServerIdentity: config.EntryHash(srv), File: config.ProjectSettingsPath(w.root),
		By: "freecode", Detail: map[bool]string{true: "approved", false: "revoked"}[approve]})
	// Not waiting for the watcher: the caller wants the outcome.
	w.reload(ctx, kindConfig)
	if err := w.waitSettled(ctx, []string{name}); err != nil {
		st, _ := w.status(name)
		return st, err
	}
	st, ok := w.status(name)
	if !ok {
		return st, fmt.Errorf("%w: %q", mcp.ErrNoServer, name)
	}
	return st, nil
}

// SetTrusted records in the user's config that the project is trusted (or
// no longer), and applies it at once: the allow rules of the project's two
// files apply only in a trusted project. Trusting accepts the files' rules
// as they are now (AcceptRules); revoking forgets what was accepted.
func (w *Workspace) SetTrusted(ctx context.Context, trusted bool) error {
	if trusted {
		return w.AcceptRules(ctx, "")
	}
	if w.root == "" {
		return errors.New("revoking trust: the workspace has no project")
	}
	if err := config.SetTrusted(w.files.config, w.root, false); err != nil {
		return fmt.Errorf("revoking trust in %s: %w", w.root, err)
	}
	w.trail.record(audit.Event{Kind: audit.KindTrust, File: w.root, By: "freecode", Detail: "revoked"})
	// After the config: a load in between finds the project untrusted,
	// never trusted without its record, which would adopt the files as
	// they are.
	if err := permissions.RemoveAccepted(w.root); err != nil {
		w.logger.Warn("trust revoked, but the record of the rules you accepted stays", "error", err)
	}
	w.reload(ctx, kindConfig|kindAccepted)
	return nil
}

// ErrRulesChanged means AcceptRules was given the hash of rules that the
// project's files no longer hold (permissions.ErrRulesChanged).
var ErrRulesChanged = permissions.ErrRulesChanged

// AcceptRules trusts the project with the rules its two files hold now:
// they become the rules the user accepted, so that what they loosened
// (ProjectInfo.PendingRules) applies, and it applies at once. With hash
// not "", the rules must hash to it (permissions.Pending.Hash of what the
// user was shown); otherwise nothing is done and the error wraps
// ErrRulesChanged.
func (w *Workspace) AcceptRules(ctx context.Context, hash string) error {
	if w.root == "" {
		return errors.New("trusting the project: the workspace has no project")
	}
	// The record first: a load between the two writes finds the project
	// trusted only with its record.
	opts := permissions.LoadOptions{UserFile: w.files.userRules, ProjectDir: w.root}
	if _, _, err := permissions.Accept(opts, hash); err != nil {
		return fmt.Errorf("accepting the rules of %s: %w", w.root, err)
	}
	if err := config.SetTrusted(w.files.config, w.root, true); err != nil {
		return fmt.Errorf("trusting %s: %w", w.root, err)
	}
	w.trail.record(audit.Event{Kind: audit.KindTrust, File: w.root, By: "freecode", Detail: "given, with the rules of its files as they are now accepted"})
	w.reload(ctx, kindConfig|kindAccepted)
	return nil
}

// ShownStatuses is Statuses as a frontend that connects now is to be told
// of them: without a server that reports connected (or idle) while its
// tools are not registered yet. A Conn takes the connected state, hands its
// tools over, then emits the status: a frontend told "connected" in between
// would call a tool the registry does not hold yet. That status is emitted
// (a StatusEvent) once the tools are registered, so a subscriber that reads
// these after subscribing is told of it all the same.
func (w *Workspace) ShownStatuses() []mcp.Status {
	registered := w.reg.Servers()
	return slices.DeleteFunc(w.Statuses(), func(st mcp.Status) bool { return aheadOfRegistry(st, registered) })
}

// aheadOfRegistry reports whether st, read after registered, is ahead of
// the registry: a Conn hands over its tools, then reports connected (a
// server on demand its manifest's, then idle).
func aheadOfRegistry(st mcp.Status, registered []string) bool {
	return (st.State == mcp.StateConnected || st.State == mcp.StateIdle) && !slices.Contains(registered, st.Name)
}

// NotSettledError lists the servers WaitSettled gave up on.
type NotSettledError struct {
	Servers []string
}

// Error lists the servers still connecting.
func (e *NotSettledError) Error() string {
	return fmt.Sprintf("still connecting: %s", strings.Join(e.Servers, ", "))
}

// WaitSettled waits until every server the workspace started has settled:
// connected with its tools registered, failed or stopped. It gives up, with a *NotSettledError, when
// the longest timeout of those servers, and a grace for process start-up,
// has passed, or returns ctx's error when ctx is done first.
func (w *Workspace) WaitSettled(ctx context.Context) error {
	return w.waitSettled(ctx, nil)
}

// waitSettled waits for the servers names (nil: every one started).
func (w *Workspace) waitSettled(ctx context.Context, names []string) error {
	w.mu.Lock()
	var longest time.Duration
	for _, s := range w.running {
		if names == nil || slices.Contains(names, s.Name) {
			longest = max(longest, mcp.ConnectTimeout(s))
		}
	}
	w.mu.Unlock()
	deadline := time.NewTimer(longest + settleGrace)
	defer deadline.Stop()
	for {
		// Taken before looking, so a change right after is not missed.
		changed := w.settled.next()
		registered := w.reg.Servers()
		var busy []string
		for _, st := range w.Statuses() {
			if names != nil && !slices.Contains(names, st.Name) {
				continue
			}
			if st.State == mcp.StateConnecting || st.State == mcp.StateReconnecting || aheadOfRegistry(st, registered) {
				busy = append(busy, st.Name)
			}
		}
		if len(busy) == 0 {
			return nil
		}
		select {
		case <-changed:
		case <-deadline.C:
			return &NotSettledError{Servers: busy}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
