//go:build !linux && !darwin

package sandbox

import (
	"fmt"
	"runtime"
)

func prepare(p Policy, argv, env []string, opts *Options) (*Launch, error) {
	return nil, fmt.Errorf("%w: FreeCode sandboxes servers on Linux and macOS, not on %s: set \"sandbox\": false on the server's entry to run it unsandboxed", ErrUnavailable, runtime.GOOS)
}
