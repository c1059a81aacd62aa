//go:build !unix

package mcp

import "time"

// cpuTime is not measured here.
func cpuTime() (time.Duration, int64) { return 0, 0 }
