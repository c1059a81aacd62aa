package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"

	"github.com/freecode/freecode/config"
)

// Where the sandbox's own files sit inside it, on its private /tmp.
const (
	innerDir    = "/tmp/.freecode-sandbox"
	innerBridge = innerDir + "/bridge"     // this program, run as the bridge
	innerSocket = innerDir + "/proxy.sock" // the proxy's socket
)

// bwrapArgs is the bubblewrap command line that runs argv under p. socket
// is the proxy's unix socket when p has an allow-list ("" otherwise):
// argv is then run by the bridge.
//
// Order matters: bubblewrap applies its mounts in turn, so the writable
// binds come after the read-only root and the hidden paths after both,
// and a secret inside a writable directory stays hidden.
//
// The server runs through this program's exec stub (execArg), which puts
// the seccomp filter on it: exe is this program's executable, always
// bound in. disableUserns adds bubblewrap's own --disable-userns (0.8
// and later), which refuses nested user namespaces beside the filter.
func bwrapArgs(p Policy, argv []string, exe, socket string, disableUserns bool) []string {
	a := []string{
		// Its first process gets SIGKILL when bwrap dies, and with it the
		// whole pid namespace: nothing a server started outlives it.
		"--die-with-parent",
		"--unshare-all",
	}
	if p.Network == config.NetworkAll {
		a = append(a, "--share-net")
	}
	a = append(a,
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
		// The user's session: the D-Bus bus, the keyring's and ssh-agent's
		// sockets. A unix socket is reached through the filesystem, not
		// the network namespace, and a read-only mount does not stop a
		// connect.
		"--tmpfs", "/run/user",
	)
	for _, s := range []string{"/run/docker.sock", "/var/run/docker.sock"} {
		if _, err := os.Stat(s); err == nil {
			a = append(a, "--ro-bind", "/dev/null", s)
		}
	}
	// A program that lives in the host's /tmp (a test binary, a build
	// tree) is still found: its directory is bound in, read-only.
	if len(argv) > 0 {
		if prog, err := exec.LookPath(argv[0]); err == nil {
			if prog, err = filepath.Abs(prog); err == nil && within(prog, "/tmp") {
				a = append(a, "--ro-bind", filepath.Dir(prog), filepath.Dir(prog))
			}
		}
	}
	for _, w := range append([]string{p.Cwd}, p.Writable...) {
		a = append(a, "--bind", w, w)
	}
	for _, d := range p.DenyRead {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			// An empty directory nobody may enter: a read says EACCES
			// with the path, which Denials can tell from a missing file.
			a = append(a, "--perms", "0000", "--tmpfs", d)
		} else {
			a = append(a, "--ro-bind", "/dev/null", d)
		}
	}
	a = append(a, "--ro-bind", exe, innerBridge)
	if socket != "" {
		a = append(a, "--bind", socket, innerSocket)
	}
	if disableUserns {
		// It needs --unshare-user said, not the -try of --unshare-all.
		a = append(a, "--unshare-user", "--disable-userns")
	}
	a = append(a, "--chdir", p.Cwd, "--")
	if socket != "" {
		// The bridge, unfiltered, runs the exec stub.
		a = append(a, innerBridge, bridgeArg, innerSocket)
	}
	a = append(a, innerBridge, execArg)
	if p.AllowUnixSockets {
		a = append(a, allowUnixFlag)
	}
	a = append(a, "--")
	return append(a, argv...)
}
