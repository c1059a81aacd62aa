// Package proc runs the MCP client's local servers as processes and makes
// sure none outlives its use: not after a stop, and not after FreeCode
// itself was killed outright.
//
// A server is started by [Start], in a process group of its own (its pid
// is the group's id), with its three pipes as real files, so exec.Cmd
// starts no copying goroutines. Its environment is built by [Env]: an
// allow-list of this process's variables plus the server's own, since
// FreeCode's environment holds provider API keys. [Process.Stop] ends it in
// steps, each given time to work: stdin closed, SIGTERM to the group,
// SIGKILL to the group; then the same for what left the group.
//
// Two things survive a plain group kill, and the rest of the package is
// about them:
//
//   - What a server started, when FreeCode is killed (kill -9, the OOM
//     killer): on Linux the kernel signals the group's leader when FreeCode
//     dies, but not what the leader started. Each FreeCode process records
//     the groups it starts (pid and start time, never a pid alone) in a
//     file of its own in a run directory, and the next one reaps what a
//     dead recorder left ([ReapOrphans], called once at startup by the
//     commands). orphans.go.
//   - A process that left its server's group and session (a daemon's
//     double fork and setsid()). While it runs servers, a Linux FreeCode
//     process is a child subreaper, so such an orphan is reparented to it
//     instead of to init: a server's stop ends those it can tell are that
//     server's, and they are recorded as escapees for the next process to
//     reap should this one be killed. The kernel does not say when it
//     reparents, so this process looks (its own children lists) when asked
//     to ([RecordAdopted], [PokeAdoptions]) and every second.
//     orphans_escape_linux.go.
//
// That is process-wide state, and the package owns it: the subreaper
// setting, the running servers' group leaders, the run record and one
// goroutine that reaps adopted zombies while any server runs. A program
// that launches something else that may daemonize (a browser, for a
// sign-in) claims the launch ([ClaimLaunch]), so no server's stop takes
// what the launch left.
//
// Outside Linux there are no start times to read: nothing is recorded or
// reaped, and escapees are not tracked. On Windows there are no process
// groups to signal; a stop closes stdin, then kills the direct child.
//
// The package knows processes, not MCP: the caller (package mcp) decides
// what to run, reads the pipes, and keeps the stderr lines it is handed.
package proc
