package workspace

import (
	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/permissions"
)

// Event is one thing a subscriber is told: a *StatusEvent,
// *ToolsChangedEvent, *ToolSetEvent, *ProblemsEvent, *RulesChangedEvent,
// *ProjectEvent, *LogEvent, *ReviewEvent, *TaskEvent (tasks.go) or
// *MissedEvent. Events are
// shared by every subscriber and must not be modified.
type Event interface {
	event()
}

// StatusEvent is a server's new status: a state change, a reconnect try's
// error, a changed tool count. A subscriber that is behind gets only the
// latest status of each server.
type StatusEvent struct {
	Status mcp.Status
	// Removed says that the server's entry left the config (or the
	// project's settings): Status is what the entry said, in state
	// stopped, and it is the server's last status unless an entry of that
	// name comes back. Statuses no longer lists it.
	Removed bool
}

// ToolsChangedEvent says that the provider definitions changed: it comes
// only when a hash differs from the one last published, so a reconnect that
// brings the same tools, which keeps providers' prompt caches warm, is not
// reported. Several registry changes that one rebuild covered come as one
// event.
type ToolsChangedEvent struct {
	// Hashes is the new hash of every format.
	Hashes map[defscache.Format]string
	// Server is the server whose tools changed; "" when the rebuild
	// covered changes of several servers, or of the built-ins. Server and
	// Reason are hints for a log or a status line: a change that lands
	// while a rebuild runs may be in that rebuild's hashes and named by
	// the next event, so a frontend reads the definitions again whatever
	// they say.
	Server string
	// Reason is the registry's reason ("added", "removed", "listChanged",
	// "reconnected", "failed", "stopped", …), or "several" when the
	// changes covered had different reasons.
	Reason string
}

// ToolSetEvent says that the registry's tools changed: a tool came, went,
// or changed its description, schemas or annotations. It comes for every
// change, whether or not the provider definitions' hashes moved (they do
// not for a deferred server's tools, which are not in the provider array,
// nor for an output schema, which providers never see), so it is what a
// frontend that lists every tool, such as FreeCode's own MCP server, reads
// the tools again on. Several may come for one change of a server's tools.
// Only subscribers that ask for it (SubscribeOptions.ToolSet) get it.
type ToolSetEvent struct {
	Server string // "" for the built-ins
	Reason string // the registry's reason, as in ToolsChangedEvent
}

// ReasonSeveral is a ToolsChangedEvent's Reason when it covers changes made
// for different reasons.
const ReasonSeveral = "several"

// ProblemsEvent is the problems of one watched file (the config file, a rule
// file, the project's settings) after it changed: why it does not load, with
// line and column, and its warnings, such as rules that are ignored. It
// comes when the list changes, and with an empty list once the file is
// fixed. Until a file that does not load is fixed, what it last held stays
// in force.
type ProblemsEvent struct {
	Path     string
	Problems []Problem
	// Err is why the file does not load, nil when it loads, warnings or
	// not: a *config.ParseError, a *config.ValidationError or a read error.
	// Of the project's settings, which both the servers' and the rules'
	// readers read, it is the servers' reader's error if there is one.
	Err error
	// RulesErr is why the file's permission rules do not load, nil when
	// they load or the file holds none. Of the project's settings it may
	// be nil while Err is not: a bad server entry leaves the rules in force.
	RulesErr error
	// Summary is the problems in one line for a view or a status bar:
	// "the config has 2 problems; showing the last good one", "the
	// config has 1 warning"; "" when there are none.
	Summary string
}

// Severity says whether a Problem stops a file from loading.
type Severity string

// The severities of a Problem.
const (
	SeverityError   Severity = "error"   // the file does not load; its last good contents stay in force
	SeverityWarning Severity = "warning" // the file loads, but this part of it is ignored
)

// Problem is one problem of a file.
type Problem struct {
	Message  string
	Line     int    // 1-based; 0 when not known
	Column   int    // 1-based, in bytes; 0 when not known
	Key      string // e.g. "mcp.servers[2].url"
	Severity Severity
}

// RulesChangedEvent carries the permission rules in force after a rule file
// changed or the project's trust did. The next decision uses them.
type RulesChangedEvent struct {
	Rules []permissions.Rule
}

// ProjectEvent carries the project's description after its trust changed
// (here, or by another process that edited the config file), or what its
// rule files loosen beyond the rules the user accepted did
// (ProjectInfo.PendingRules).
type ProjectEvent struct {
	Project ProjectInfo
}

// LogEvent is one line of a server's log: a line it wrote to stderr, or an
// MCP notifications/message, its secrets masked (see mcp.Log). Only the
// subscribers that ask get them (SubscribeOptions.Logs). Each server
// may log up to 100 lines a second, 200 at once; Dropped counts the lines
// of the server dropped beyond that since its last LogEvent. A LogEvent
// with Dropped and no Message only tells of drops: the server fell silent
// after them.
type LogEvent struct {
	Log     mcp.Log
	Dropped int
}

// ReviewEvent carries the tools of one server whose definitions await the
// user's review (changed since accepted, or new), after that list changed:
// a tool's definition changed, a review was done, the server went. An
// empty list means nothing is left to review. Only subscribers that ask
// for it (SubscribeOptions.Reviews) get it.
type ReviewEvent struct {
	Server  string
	Reviews []ToolReview
}

// MissedEvent tells a subscriber that fell further behind than its queue
// holds that Count events were dropped for it. It comes before the events
// that were kept. Statuses are never dropped (each server's latest is
// kept), so a subscriber resyncs with Problems, Rules, Project and the
// definitions' hashes.
type MissedEvent struct {
	Count int
}

func (*StatusEvent) event()       {}
func (*ToolsChangedEvent) event() {}
func (*ToolSetEvent) event()      {}
func (*ProblemsEvent) event()     {}
func (*RulesChangedEvent) event() {}
func (*ProjectEvent) event()      {}
func (*LogEvent) event()          {}
func (*MissedEvent) event()       {}
func (*ReviewEvent) event()       {}
