package sandbox

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freecode/freecode/config"
)

// needBwrap skips where bubblewrap is missing; the Makefile installs it
// for make test, so there it runs.
func needBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed (make test installs it)")
	}
}

// runIn runs the test server with arg in a sandbox of b, started in cwd
// by a user whose home is home, and returns its stdout, stderr and the
// launch (released when the test ends).
func runIn(t *testing.T, b config.Sandbox, home, cwd, arg string) (string, string, *Launch) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var h Host
	if home != "" {
		h.Homes = []string{home}
	}
	pol, err := Resolve(b, h, cwd, []string{exe}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Prepare(pol, []string{exe, arg}, append(os.Environ(), testServerEnv+"=1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Release)
	cmd := exec.Command(l.Argv[0], l.Argv[1:]...)
	cmd.Env = l.Env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
	}
	return strings.TrimSpace(out.String()), strings.TrimSpace(errOut.String()), l
}

func TestCannotWriteOutsideAllowedPaths(t *testing.T) {
	needBwrap(t)
	cwd, other, extra := t.TempDir(), t.TempDir(), t.TempDir()
	b := config.Sandbox{AllowWrite: []string{extra}, Network: config.NetworkNone}
	for _, tc := range []struct {
		file string
		want string
	}{
		{filepath.Join(cwd, "in-cwd"), "ok"},
		{filepath.Join(extra, "in-allowWrite"), "ok"},
		{filepath.Join(other, "elsewhere"), "fail"},
		{"/usr/freecode-sandbox-test", "fail"},
	} {
		out, stderr, _ := runIn(t, b, "", cwd, "write="+tc.file)
		if out != tc.want {
			t.Errorf("write %s: %q (stderr %q), want %q", tc.file, out, stderr, tc.want)
		}
		_, err := os.Stat(tc.file)
		if written := err == nil; written != (tc.want == "ok") {
			t.Errorf("write %s: the file exists outside: %v, want %v", tc.file, written, tc.want == "ok")
		}
		if tc.want == "fail" {
			ds := Denials(Policy{Cwd: cwd}, b, strings.Split(stderr, "\n"), nil)
			if len(ds) != 1 || ds[0].Kind != DeniedWrite || ds[0].What != tc.file || !strings.Contains(ds[0].Fix, `"allowWrite":["`+extra+`","`+filepath.Dir(tc.file)+`"]`) {
				t.Errorf("write %s: denials %+v", tc.file, ds)
			}
		}
	}
}

func TestCannotReadDenyRead(t *testing.T) {
	needBwrap(t)
	// The home directory is inside the writable cwd, so the hidden paths
	// are shown to stay hidden there too.
	cwd := t.TempDir()
	home := filepath.Join(cwd, "home")
	key := filepath.Join(home, ".ssh", "id_ed25519")
	mine := filepath.Join(home, "notes", "secret.txt")
	for _, f := range []string{key, mine, filepath.Join(home, "readable.txt")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b := config.Sandbox{DenyRead: []string{filepath.Join(home, "notes")}, Network: config.NetworkNone}
	pol, err := Resolve(b, Host{Homes: []string{home}}, cwd, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file, want string
		fix        bool // the denial has a one-line fix: the entry's own denyRead
	}{
		{key, "fail", false},
		{mine, "fail", true},
		{filepath.Join(home, "readable.txt"), "ok", false},
	} {
		out, stderr, _ := runIn(t, b, home, cwd, "read="+tc.file)
		if out != tc.want {
			t.Errorf("read %s: %q (stderr %q), want %q", tc.file, out, stderr, tc.want)
			continue
		}
		if tc.want == "fail" {
			ds := Denials(pol, b, []string{stderr}, nil)
			if len(ds) != 1 || ds[0].Kind != DeniedRead || (ds[0].Fix != "") != tc.fix {
				t.Errorf("read %s: denials %+v of stderr %q", tc.file, ds, stderr)
			}
		}
	}
}

func TestNetworkNoneCannotReachLoopback(t *testing.T) {
	needBwrap(t)
	ln := listenAndClose(t, "tcp", "127.0.0.1:0")
	cwd := t.TempDir()
	// Under "all" the same dial reaches the listener: the test can fail.
	for _, tc := range []struct{ network, want string }{{config.NetworkAll, "ok"}, {config.NetworkNone, "fail"}} {
		out, stderr, _ := runIn(t, config.Sandbox{Network: tc.network}, "", cwd, "dial="+ln.Addr().String())
		if out != tc.want {
			t.Errorf("network %s: dial %s: %q (stderr %q), want %q", tc.network, ln.Addr(), out, stderr, tc.want)
		}
	}
}

// Through the proxy, a name that resolves to the host's loopback (here
// localhost, by /etc/hosts) reaches it only where the allow-list names
// the address too, on the port; the address by itself is refused unless
// listed, with the fix that lists it.
func TestAllowListThroughProxy(t *testing.T) {
	needBwrap(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello")) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	cwd := t.TempDir()
	loopback, err := net.DefaultResolver.LookupNetIP(t.Context(), "ip", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	named := config.Sandbox{Network: config.NetworkDomains, AllowedDomains: []string{"localhost:" + port}}
	b := named
	for _, a := range loopback {
		b.AllowedDomains = append(b.AllowedDomains, net.JoinHostPort(a.Unmap().String(), port))
	}
	out, stderr, l := runIn(t, named, "", cwd, "get=http://localhost:"+port+"/")
	if !strings.HasPrefix(out, "403 ") || !strings.Contains(out, "a loopback address") {
		t.Errorf("get localhost, its address not listed: %q (stderr %q), want 403", out, stderr)
	}
	if log := l.Proxy.Log(); len(log) != 1 || log[0].Allowed || log[0].Refused != RefusedAddress {
		t.Errorf("the proxy's log: %+v", log)
	}
	out, stderr, l = runIn(t, b, "", cwd, "get=http://localhost:"+port+"/")
	if out != "200 hello" {
		t.Errorf("get localhost: %q (stderr %q), want 200 hello", out, stderr)
	}
	if log := l.Proxy.Log(); len(log) != 1 || log[0].Host != "localhost" || !log[0].Allowed {
		t.Errorf("the proxy's log: %+v", log)
	}
	out, stderr, l = runIn(t, named, "", cwd, "get=http://127.0.0.1:"+port+"/")
	if !strings.HasPrefix(out, "403 ") {
		t.Errorf("get 127.0.0.1: %q (stderr %q), want 403", out, stderr)
	}
	log := l.Proxy.Log()
	if len(log) != 1 || log[0].Host != "127.0.0.1" || log[0].Allowed {
		t.Fatalf("the proxy's log: %+v", log)
	}
	ds := Denials(Policy{Network: config.NetworkDomains}, named, nil, log)
	if len(ds) != 1 || ds[0].Fix != `"sandbox":{"network":{"allowedDomains":["localhost:`+port+`","127.0.0.1:`+port+`"]}}` {
		t.Errorf("denials: %+v", ds)
	}
}

// listenAndClose listens at address and closes every connection it
// accepts, until the test ends.
func listenAndClose(t *testing.T, network, address string) net.Listener {
	t.Helper()
	ln, err := net.Listen(network, address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln
}
