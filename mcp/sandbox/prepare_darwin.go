package sandbox

import (
	"fmt"
	"net"
	"os/exec"

	"github.com/freecode/freecode/config"
)

// On macOS the proxy listens on the host's loopback, and the profile
// lets the server reach that one port (seatbelt.go). Untested on a Mac.
func prepare(p Policy, argv, env []string, opts *Options) (*Launch, error) {
	se, err := exec.LookPath("sandbox-exec")
	if err != nil {
		return nil, fmt.Errorf("%w: sandbox-exec is not on the PATH (it is part of macOS, in /usr/bin): set \"sandbox\": false on the server's entry to run it unsandboxed", ErrUnavailable)
	}
	l := &Launch{Env: env, Release: func() {}}
	port := 0
	if p.Network == config.NetworkDomains {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("sandbox: the proxy: %w", err)
		}
		port = ln.Addr().(*net.TCPAddr).Port
		l.Proxy = newProxy(p, ln, opts)
		l.Release = func() { l.Proxy.Close() }
		l.Env = append(l.Env, proxyEnv(fmt.Sprintf("http://127.0.0.1:%d", port))...)
	}
	l.Argv = append([]string{se, "-p", seatbeltProfile(p, port)}, argv...)
	return l, nil
}
