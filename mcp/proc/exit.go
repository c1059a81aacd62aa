package proc

import (
	"fmt"
	"strings"
)

// Exit tells how the server (its group's leader) ended, once it has:
// its exit code, or -1 when a signal ended it, and that in words
// ("exited with code 3", "was ended by signal killed"). ok is false while
// it runs.
func (p *Process) Exit() (code int, how string, ok bool) {
	select {
	case <-p.exited:
	default:
		return -1, "", false
	}
	ps := p.cmd.ProcessState
	if ps == nil {
		return -1, "ended", true
	}
	if code := ps.ExitCode(); code >= 0 {
		return code, fmt.Sprintf("exited with code %d", code), true
	}
	// "signal: killed", "signal: segmentation fault (core dumped)".
	return -1, "was ended by " + strings.Replace(ps.String(), ": ", " ", 1), true
}
