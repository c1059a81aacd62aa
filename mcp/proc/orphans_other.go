//go:build !linux

package proc

import (
	"log/slog"
	"os/exec"
	"time"
)

// Outside Linux there is no /proc to read start times from: nothing is
// recorded or reaped (see ReapOrphans).

func procStat(int) (procInfo, bool) { return procInfo{}, false }

func groupProcs(int) []procInfo { return nil }

func bootID() string { return "" }

func killProc(int) error { return nil }

// Nor are escapees from a server's group tracked (see orphans_escape_linux.go).

func startServerCmd(cmd *exec.Cmd) error { return cmd.Start() }

func claimLaunch() (done func()) { return func() {} }

func escapeSnapshot(int) procSet { return nil }

func stopEscapees(int, procSet, time.Duration, *slog.Logger) {}

func reapAdopted() {}

func reapEscapee(procID) int { return 0 }

func recordAdopted() {}

func pokeAdoptions() {}
