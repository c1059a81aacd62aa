package proc

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

// TestMain doubles as the processes the tests start: the test binary
// re-executed with testServerEnv set is a server (runTestServer), with
// testOwnerEnv set a FreeCode process that runs one (runTestOwner).
func TestMain(m *testing.M) {
	if os.Getenv(testServerEnv) != "" {
		os.Exit(runTestServer(os.Args[1:]))
	}
	if dir := os.Getenv(testOwnerEnv); dir != "" {
		os.Exit(runTestOwner(dir))
	}
	goleak.VerifyTestMain(m)
}

// testServerEnv selects the test server mode of the test binary; its one
// argument says what it does (none of them speaks MCP: here a server is
// only a process that runs):
//
//	fork      fork a child that ignores SIGTERM, print its pid on stdout,
//	          ignore SIGTERM and sleep
//	escape=F  start a daemon by double fork (detach=F), print "ready" on
//	          stdout once the daemon's parent exited, sleep
//	detach=F  (internal) start a child in a session of its own (setsid),
//	          write its pid to file F, exit
//	child     (internal) ignore SIGTERM, sleep
const testServerEnv = "FREECODE_PROC_TEST_SERVER"

// testOwnerEnv runs the test binary as a FreeCode process that records its
// servers in the run directory the variable names, starts one that forks a
// child, prints "ready <leader> <child>" and waits to be killed. With
// testOwnerEscapeEnv set too, its one server starts a daemon by double fork
// and setsid (escape=F, F the variable's value); it records the daemon as
// the Conn does at the end of a connect (RecordAdopted) and prints
// "ready <leader> <daemon>".
const (
	testOwnerEnv       = "FREECODE_PROC_TEST_OWNER"
	testOwnerEscapeEnv = "FREECODE_PROC_TEST_OWNER_ESCAPE"
)
