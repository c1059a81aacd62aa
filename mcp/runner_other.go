//go:build !linux

package mcp

import "os"

// unreadInput cannot tell, outside Linux, whether the server has read what
// was written to it: a runner server's connect then has its whole budget.
func unreadInput(*os.File) (int, bool) { return 0, false }

// seesUnreadInput: unreadInput does not answer here.
const seesUnreadInput = false
