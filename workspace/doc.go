// Package workspace runs FreeCode for one project root: the one place where
// the config, the rule files, the MCP servers, the tool registry, the
// provider definitions and the orchestrator are wired together. The CLI's
// tools commands, the sidecar and FreeCode's own MCP server mode all run on
// a Workspace; none of them wires those packages by hand.
//
// # What a Workspace owns
//
//   - The files: the config file (~/.freecode/config.json, or the path
//     given), the user's rule file settings.json beside it, and for a
//     project root <root>/.freecode/settings.json (the project's servers and
//     rules) and <root>/.freecode/settings.local.json (rules). All are
//     watched (config.Watch: one fsnotify instance, debounced) and an edit
//     applies without a restart. A file that does not load keeps what it
//     last held in force and is reported, with line and column, in a
//     *ProblemsEvent; the fix is reported with an empty list.
//   - The servers, through an mcp.Manager: a config edit is applied with
//     Manager.Apply (added servers start, removed ones stop, changed ones
//     restart, the rest are left alone). A project's server runs only once
//     the user approved that exact entry (Approve, stored in the user's
//     config by config.Approve); until then it is listed as
//     awaitingApproval and never started.
//   - The project's trust (SetTrusted, or another process's edit of the
//     config file): it decides whether the project's allow rules apply, so a
//     change reloads the rules.
//   - The tool registry and the defs cache, kept in step: a registry change
//     drops the cache's entries at once; one goroutine rebuilds them, once
//     for all the changes since its last rebuild, and publishes a
//     *ToolsChangedEvent only if a hash changed.
//   - Deferral (mcp.deferTools, a server's deferTools): which MCP tools
//     are left out of the provider definitions, and the tool_search
//     built-in that finds them, registered while any tool may be
//     deferred. The auto mode turns on once the MCP tools outgrow
//     mcp.autoDeferTools or mcp.autoDeferTokens and stays on until those
//     settings change, so that servers coming and going do not move the
//     definitions back and forth. A deferred tool is called by its id
//     like any other: finding it only shows the model its definition.
//   - Pinning (pins.go): every list a server brings is compared with the
//     definitions the user accepted, kept in the server's manifest
//     (internal/manifest, in manifests/ beside the config file, one file
//     per server, named by its identity: config.ManifestKey, so an edit of
//     the entry keeps its pins), which it is written to. The tools are
//     registered as the user accepted them, with an orchestrator.Review
//     for those changed or new, and *ReviewEvent says when that list
//     changes. The manifests are watched, and a call to a tool under
//     review judges it by its manifest on disk, so a review made
//     elsewhere (`freecode mcp review`) counts at once; that look is a
//     read, and only the watcher and the reviews register tools anew
//     (reviews.go).
//   - Servers on demand (ondemand.go): the Manager registers them idle
//     from their manifests (ManagerOptions.Manifest), starts one at a call
//     of its tools (its Runner acquires it: runner.go) or when
//     tool_search finds one (warm), and idles it out; with mcp.deferTools
//     "auto" a deferred server with a manifest runs on demand too.
//   - The orchestrator, whose rules are the workspace's permissions.Set
//     (reloaded in place, so the next decision uses the new rules) and whose
//     result cap follows the config. It declares what it needs of a tool's
//     runner (orchestrator.Runner) and the errors it tells apart; the
//     workspace's runner (runner.go) is the one place where those meet
//     the MCP client.
//
// The parts that keep state of their own (the definitions builder, the
// roots, the log relay, the pinner) are their own types, each with its
// lock and its Close; Workspace states the lock order between them and
// the order Close closes them in.
//
// Each frontend brings its own orchestrator.ExecOptions to Execute: the
// Approver that asks its user, where progress goes. Nothing of one
// frontend's batch reaches another.
//
// # Events
//
// One stream, fanned out to every Subscription: *StatusEvent (a server's
// status changed, or its entry was removed), *ToolsChangedEvent (the definitions' hashes changed),
// *ToolSetEvent (the registry's tools changed, hashes or not; on request),
// *ReviewEvent (a server's tools awaiting review changed; on request),
// *ProblemsEvent (a watched file's problems changed), *RulesChangedEvent
// (the rules in force changed), *ProjectEvent (the project's trust, or
// its rules awaiting review, changed), *LogEvent (a line of a server's stderr or MCP log, rate-bounded
// per server; for the subscribers that ask, SubscribeOptions.Logs) and
// *MissedEvent
// (this subscriber fell behind and lost events).
//
// Publishing never waits for a subscriber: Conn goroutines and the file
// watcher publish, and a slow frontend must not stall a server or the
// watcher. Each subscription has its own queue. Statuses coalesce per
// server: one that is behind gets each server's latest status, not every
// step, but never ahead of an event that happened after it (a server's
// resources changed after it connected reach the subscriber after its
// "connected"). Other events queue up to SubscribeOptions.Capacity; beyond it the
// oldest are dropped and the subscriber's next event is a *MissedEvent, on
// which it reads the state again (Statuses, Problems, Rules, Project,
// Definitions).
//
// # MCP roots
//
// The roots (Options.Roots, SetRoots) are the directories every server is
// told the user works in: an editor's workspace folders. Each server's
// go-sdk client declares the roots capability, answers roots/list and,
// on SetRoots, sends notifications/roots/list_changed; a workspace without
// roots declares no roots capability.
//
// # Elicitation and sampling
//
// The frontend that caused a server's elicitation or sampling request, or
// its demand for more access, is orchestrator.ExecOptions.Asker, which the
// orchestrator hands each call's Runner in the call (orchestrator.Call);
// the workspace's runner gives it to the Conn with the call
// (mcp.CallOptions), which asks it (see caps.go and mcp.Asker).
// Options.Elicitation and Options.Sampling declare the capabilities.
package workspace
