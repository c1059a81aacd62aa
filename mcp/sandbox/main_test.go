package sandbox

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

// TestMain doubles as the sandbox's bridge (RunBridge) and as the server
// the tests sandbox: the test binary with testServerEnv set does what its
// one argument says and reports on stdout:
//
//	write=F  write file F
//	read=F   read file F
//	dial=A   open a TCP connection to A
//	get=U    GET U through the proxy the environment names
//
// and, on Linux (seccomp_linux_test.go, through platformVerb), the
// system calls the seccomp filter looks at:
//
//	unshare        unshare(CLONE_NEWUSER)
//	clone-userns   start true in a new user namespace (clone)
//	unix=P         connect to the unix socket P
//	socketpair     make a pair of unix sockets
//	sys=NAME       the raw system call NAME, with harmless arguments
func TestMain(m *testing.M) {
	RunBridge()
	if os.Getenv(testServerEnv) != "" {
		os.Exit(runTestServer(os.Args[1]))
	}
	goleak.VerifyTestMain(m)
}

const testServerEnv = "FREECODE_SANDBOX_TEST_SERVER"

func runTestServer(arg string) int {
	what, v, _ := cut(arg)
	var err error
	switch what {
	case "write":
		err = os.WriteFile(v, []byte("x"), 0o600)
	case "read":
		_, err = os.ReadFile(v)
	case "dial":
		var c net.Conn
		if c, err = net.DialTimeout("tcp", v, 5*time.Second); err == nil {
			c.Close()
		}
	case "get":
		// Not http.ProxyFromEnvironment: it never proxies localhost.
		var px *url.URL
		if px, err = url.Parse(os.Getenv("HTTPS_PROXY")); err == nil {
			c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(px)}, Timeout: 10 * time.Second}
			var resp *http.Response
			if resp, err = c.Get(v); err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				fmt.Printf("%d %s\n", resp.StatusCode, b)
				return 0
			}
		}
	default:
		var known bool
		if platformVerb != nil {
			known, err = platformVerb(what, v)
		}
		if !known {
			return 2
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		fmt.Println("fail")
		return 1
	}
	fmt.Println("ok")
	return 0
}

// platformVerb, if set, runs the test server's verbs of one platform;
// known is false for a verb it does not know.
var platformVerb func(what, v string) (known bool, err error)

func cut(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '=' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
