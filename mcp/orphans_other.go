//go:build !linux

package mcp

// Outside Linux there is no /proc to read start times from: nothing is
// recorded or reaped (see ReapOrphans).

func procStat(int) (procInfo, bool) { return procInfo{}, false }

func groupProcs(int) []procInfo { return nil }

func bootID() string { return "" }

func killProc(int) error { return nil }
