package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/freecode/freecode/config"
)

func TestSeatbeltProfile(t *testing.T) {
	p := Policy{
		Cwd: "/Users/me/proj", Writable: []string{"/Users/me/.npm"},
		DenyRead: []string{"/Users/me/.ssh", `/Users/me/odd "dir"`},
		Network:  config.NetworkDomains, Domains: []string{"registry.npmjs.org"},
	}
	got := seatbeltProfile(p, 40123)
	for _, want := range []string{
		"(version 1)\n(deny default)\n",
		"(allow file-read*)\n(deny file-read* file-write*\n  (subpath \"/Users/me/.ssh\")\n  (subpath \"/Users/me/odd \\\"dir\\\"\"))\n",
		"(allow file-write*\n  (subpath \"/Users/me/proj\")\n  (subpath \"/Users/me/.npm\")\n",
		"(allow network-outbound (remote ip \"localhost:40123\"))\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the profile has no %q:\n%s", want, got)
		}
	}
	// The hidden paths are denied again after the writable ones: the last
	// rule that matches wins.
	if strings.LastIndex(got, "(deny file-write*") < strings.Index(got, "(allow file-write*") {
		t.Errorf("no deny of the hidden paths after the writable ones:\n%s", got)
	}
	if strings.Contains(got, "(allow network*)") {
		t.Errorf("an allow-list profile allows the whole network:\n%s", got)
	}
	for net, want := range map[string]string{config.NetworkAll: "(allow network*)\n", config.NetworkNone: ""} {
		p.Network = net
		got := seatbeltProfile(p, 0)
		if want != "" && !strings.Contains(got, want) || want == "" && strings.Contains(got, "network") {
			t.Errorf("network %s: profile\n%s", net, got)
		}
	}
}

func TestAllowed(t *testing.T) {
	domains := []string{"registry.npmjs.org", "*.example.com", "db.example.org:5432", "127.0.0.1:5432", "[::1]:8080", "10.0.0.5"}
	for host, want := range map[string]bool{
		"registry.npmjs.org": true, "REGISTRY.npmjs.org.": true, "evil-registry.npmjs.org": false,
		"api.example.com": true, "a.b.example.com": true, "example.com": false, "example.com.evil.org": false,
		"db.example.org": true, "127.0.0.1": true, "::1": true, "10.0.0.5": true, "::ffff:10.0.0.5": true,
		"127.0.0.2": false, "localhost": false,
	} {
		if got := Allowed(domains, host); got != want {
			t.Errorf("Allowed(%s) = %v, want %v", host, got, want)
		}
	}
}

// The proxy over a unix socket, as the bridge reaches it: a CONNECT to an
// allowed host is tunnelled, one to another is refused, and both are in
// its log.
func TestProxyConnect(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "upstream") }))
	defer up.Close()
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	ln, err := net.Listen("unix", t.TempDir()+"/p.sock")
	if err != nil {
		t.Fatal(err)
	}
	// localhost is allowed by name, and the address it resolves to by
	// itself, on the upstream's port.
	px := NewProxy([]string{"localhost:" + port, "127.0.0.1:" + port}, &ProxyOptions{
		LookupIP: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		},
	})
	px.Serve(ln)
	defer px.Close()
	connect := func(host string) (string, *bufio.Reader, net.Conn) {
		c, err := net.Dial("unix", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		hostPort := net.JoinHostPort(host, port)
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hostPort, hostPort)
		br := bufio.NewReader(c)
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(line), br, c
	}
	status, br, c := connect("localhost")
	if status != "HTTP/1.1 200 Connection established" {
		t.Fatalf("CONNECT localhost: %q", status)
	}
	br.ReadString('\n') // the blank line
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("through the tunnel: %v %v", resp, err)
	}
	resp.Body.Close()
	c.Close()
	status, _, c = connect("::1")
	c.Close()
	if !strings.HasPrefix(status, "HTTP/1.1 403") {
		t.Errorf("CONNECT [::1]: %q, want 403", status)
	}
	log := px.Log()
	if len(log) != 2 || !log[0].Allowed || log[0].Host != "localhost" || log[1].Allowed || log[1].Host != "::1" {
		t.Errorf("the log: %+v", log)
	}
}

func TestDenialsFromStderr(t *testing.T) {
	p := Policy{Cwd: "/work", DenyRead: []string{"/home/me/.ssh"}, Network: config.NetworkNone}
	b := config.Sandbox{Network: config.NetworkNone}
	got := Denials(p, b, []string{
		"Error: EROFS: read-only file system, open '/usr/lib/x.json'",
		"PermissionError: [Errno 13] Permission denied: '/home/me/.ssh/id_rsa'",
		"npm error code EAI_AGAIN",
		"Error: getaddrinfo EAI_AGAIN api.github.com",
		"bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.",
		"an unrelated line",
	}, nil)
	want := []struct{ kind, what, fix string }{
		{DeniedWrite, "/usr/lib/x.json", `"sandbox":{"filesystem":{"allowWrite":["/usr/lib"]}}`},
		{DeniedRead, "/home/me/.ssh/id_rsa", ""},
		{DeniedNetwork, "api.github.com", `"sandbox":{"network":{"allowedDomains":["api.github.com"]}}`},
		{DeniedSetup, "No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("%d denials, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Kind != w.kind || got[i].What != w.what || got[i].Fix != w.fix {
			t.Errorf("denial %d: %+v, want %+v", i, got[i], w)
		}
	}
}

func TestBwrapArgsOrder(t *testing.T) {
	dir := t.TempDir()
	p := Policy{Cwd: dir, DenyRead: []string{dir + "/secret"}, Network: config.NetworkNone}
	a := strings.Join(bwrapArgs(p, held{}, []string{"node", "s.js"}, "/opt/freecode", "", false), " ")
	bind, hide := strings.Index(a, "--bind "+dir+" "+dir), strings.Index(a, "/dev/null "+dir+"/secret")
	if bind < 0 || hide < bind || strings.Index(a, "--ro-bind / /") > bind {
		t.Errorf("mounts out of order: %s", a)
	}
	// The server starts through the exec stub, which filters its system
	// calls.
	if strings.Contains(a, "--share-net") || !strings.HasSuffix(a, "--ro-bind /opt/freecode "+innerBridge+" --chdir "+dir+" -- "+innerBridge+" "+execArg+" -- node s.js") {
		t.Errorf("args: %s", a)
	}
	p.AllowUnixSockets = true
	a = strings.Join(bwrapArgs(p, held{}, []string{"node"}, "/opt/freecode", "/s.sock", true), " ")
	if !strings.HasSuffix(a, "--unshare-user --disable-userns --chdir "+dir+" -- "+innerBridge+" "+bridgeArg+" "+innerSocket+" "+innerBridge+" "+execArg+" "+allowUnixFlag+" -- node") {
		t.Errorf("args with an allow-list: %s", a)
	}
}

// Under "none", a network failure that names no domain gets the generic
// advice, once.
func TestDenialsOffline(t *testing.T) {
	p := Policy{Cwd: "/work", Network: config.NetworkNone}
	got := Denials(p, config.Sandbox{Network: config.NetworkNone}, []string{"connect ENETUNREACH 1.2.3.4:443", "npm error code EAI_AGAIN"}, nil)
	if len(got) != 1 || got[0].Kind != DeniedNetwork || got[0].What != "" || !strings.Contains(got[0].Fix, "<the domain it needs>") {
		t.Errorf("denials: %+v", got)
	}
}

func TestDenialsSetup(t *testing.T) {
	got := Denials(Policy{}, config.Sandbox{}, []string{
		"bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.",
		"bwrap: Can't find source path /gone: No such file or directory",
	}, nil)
	if len(got) != 2 || !strings.Contains(got[0].Why, "user namespaces may be off") || strings.Contains(got[1].Why, "user namespaces") {
		t.Errorf("denials: %+v", got)
	}
}
