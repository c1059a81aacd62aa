package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/freecode/freecode/config"
)

// BwrapMissing is the error of a sandboxed start where bwrap is not on
// the PATH.
const bwrapMissing = `bubblewrap (bwrap) is not installed, and this server is to run in a sandbox: install it (Debian, Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap), or set "sandbox": false on the server's entry to run it with all of your rights`

func prepare(p Policy, argv, env []string, opts *Options) (*Launch, error) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, bwrapMissing)
	}
	// This program is bound in whatever the network: the exec stub that
	// filters the server's system calls, and with an allow-list the bridge.
	exe, err := executable(opts)
	if err != nil {
		return nil, fmt.Errorf("sandbox: this program, which starts the server in it: %w", err)
	}
	userns := bwrapDisablesUserns(bwrap)
	// One private directory holds what the sandbox needs from outside:
	// the masked files' copies and the proxy's socket.
	dir, err := os.MkdirTemp("", "freecode-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	var h held
	protected, unprotect, err := holdProtected(p)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	h.protected = protected
	l := &Launch{Env: env, Release: func() { unprotect(); os.RemoveAll(dir) }}
	if h.masked, err = maskedCopies(p, dir); err != nil {
		l.Release()
		return nil, err
	}
	if p.Network != config.NetworkDomains {
		l.Argv = append([]string{bwrap}, bwrapArgs(p, h, argv, exe, "", userns)...)
		return l, nil
	}
	sock := filepath.Join(dir, "proxy.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		l.Release()
		return nil, fmt.Errorf("sandbox: the proxy: %w", err)
	}
	l.Proxy = newProxy(p, ln, opts)
	release := l.Release
	l.Release = func() {
		l.Proxy.Close()
		release()
	}
	l.Argv = append([]string{bwrap}, bwrapArgs(p, h, argv, exe, sock, userns)...)
	return l, nil
}
