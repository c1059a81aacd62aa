package sandbox

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/freecode/freecode/config"
)

// Where the sandbox's own files sit inside it, on its private /tmp.
const (
	innerDir    = "/tmp/.freecode-sandbox"
	innerBridge = innerDir + "/bridge"     // this program, run as the bridge
	innerSocket = innerDir + "/proxy.sock" // the proxy's socket
)

// held is what prepare set up on the host for one sandbox: the protected
// paths that can be bound (placeholders included, see holdProtected) and
// the copies of the masked files, in p.Masked's order.
type held struct {
	protected []string
	masked    []string
}

// bwrapArgs is the bubblewrap command line that runs argv under p, with
// what prepare holds for it in h. socket is the proxy's unix socket when
// p has an allow-list ("" otherwise): argv is then run by the bridge.
//
// Order matters: bubblewrap applies its mounts in turn, so the writable
// binds come after the read-only root, the protected paths after them,
// and the hidden paths last: a protected file or a secret inside a
// writable directory stays so.
//
// The server runs through this program's exec stub (execArg), which puts
// the seccomp filter on it: exe is this program's executable, always
// bound in. disableUserns adds bubblewrap's own --disable-userns (0.8
// and later), which refuses nested user namespaces beside the filter.
func bwrapArgs(p Policy, h held, argv []string, exe, socket string, disableUserns bool) []string {
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
	// The server's own program and package where the private /tmp would
	// hide them (a test binary, a build tree, a package unpacked there).
	for _, r := range p.ReadOnly {
		a = append(a, "--ro-bind", r, r)
	}
	for _, w := range append([]string{p.Cwd}, p.Writable...) {
		a = append(a, "--bind", w, w)
		if slices.Contains(p.Sealed, w) {
			a = append(a, sealArgs(w)...)
		}
	}
	for _, r := range h.protected {
		a = append(a, "--ro-bind", r, r)
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
	for i, m := range p.Masked {
		a = append(a, "--ro-bind", h.masked[i], m)
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

// sealArgs make the writable directory dir's top read-only and what is in
// it writable (see Policy.Sealed): the directory's mount is remounted
// read-only, and each of its entries is bound writable over it. A link is
// left as it is: binding it would bind where it leads.
func sealArgs(dir string) []string {
	a := []string{"--remount-ro", dir}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return a
	}
	for _, e := range ents {
		if e.Type()&os.ModeSymlink != 0 {
			continue
		}
		p := filepath.Join(dir, e.Name())
		a = append(a, "--bind", p, p)
	}
	return a
}
