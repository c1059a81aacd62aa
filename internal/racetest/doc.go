// Package racetest, imported for its effect by the tests of every package
// whose test binary starts copies of itself (as MCP servers, frontends,
// owners of a server), has a binary built with -race exit at once.
//
// The race detector's runtime pauses for a second at every exit of a
// process built with it (its atexit_sleep_ms option, 1000 by default),
// to let other threads report. A test that starts and stops helper
// processes paid that second each time the sidecar stopped one: the
// server package's tests took 220 s under -race and 44 s with the pause
// off. The test binary and its copies are run with
// GORACE=atexit_sleep_ms=0 in the Makefile, but a copy that FreeCode
// starts as an MCP server gets only the environment FreeCode gives its
// servers, never the test's: so a binary built with -race that does not
// have the option set starts itself again, at once, with it added to
// GORACE (the same process: same pid, arguments, descriptors). Without
// -race, or where that exec fails, nothing changes.
package racetest
