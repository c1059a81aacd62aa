package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
)

// This program's first argument, as one of these, runs it as a part of
// a sandbox (see RunBridge): its bridge, or its exec stub.
const (
	bridgeArg = "__freecode-sandbox-bridge"
	execArg   = "__freecode-sandbox-exec"
	// allowUnixFlag, before the exec stub's "--", leaves the server its
	// unix sockets ("allowUnixSockets": true).
	allowUnixFlag = "--allow-unix-sockets"
)

// RunBridge, called first thing in main (and in the TestMain of tests
// that run sandboxes), runs this process as a part of a sandbox and exits
// if it was started as one, and otherwise returns at once.
//
// The exec stub (execArg, seccomp_linux.go) is how every sandboxed server
// on Linux starts: it puts the seccomp filter on itself and executes the
// server, which cannot take the filter off.
//
// A bridge runs inside the sandbox, whose network namespace has only its
// own loopback. It listens there, runs the server (through the exec
// stub) with the HTTP proxy variables naming that address, and carries
// every connection made to it over the unix socket that bubblewrap bound
// in from outside, to the filtering proxy: the server's only way out. The
// bridge itself is not filtered, since it dials that socket; the
// filter's refusal of ptrace and process_vm_* keeps the server off it.
func RunBridge() {
	if len(os.Args) >= 2 && os.Args[1] == execArg {
		os.Exit(execFiltered(os.Args[2:]))
	}
	if len(os.Args) < 4 || os.Args[1] != bridgeArg {
		return
	}
	os.Exit(bridge(os.Args[2], os.Args[3:]))
}

func bridge(socket string, argv []string) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "freecode sandbox: the proxy's bridge cannot listen:", err)
		return 126
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				u, err := net.Dial("unix", socket)
				if err != nil {
					c.Close()
					return
				}
				splice(c, u)
			}()
		}
	}()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), proxyEnv("http://"+ln.Addr().String())...)
	// The group's SIGTERM reaches the server too; the bridge waits for it.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "freecode sandbox:", err)
		return 127
	}
	go func() {
		for s := range sig {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}

// proxyEnv are the variables that send a server's HTTP through the proxy
// at url: the usual ones, npm's, and Node's switch to honour them
// (NODE_USE_ENV_PROXY, Node 24 and later). The sandbox's own loopback is
// not proxied.
func proxyEnv(url string) []string {
	return []string{
		"HTTP_PROXY=" + url, "HTTPS_PROXY=" + url, "http_proxy=" + url, "https_proxy=" + url,
		"npm_config_proxy=" + url, "npm_config_https_proxy=" + url, "NODE_USE_ENV_PROXY=1",
		"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
	}
}

// proxyVars are the names, in any case, of the variables that choose a
// proxy or bypass one: those proxyEnv sets and their neighbours.
var proxyVars = []string{
	"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "NODE_USE_ENV_PROXY",
	"npm_config_proxy", "npm_config_https_proxy", "npm_config_noproxy",
}

// isProxyVar reports whether the variable name is one of proxyVars.
func isProxyVar(name string) bool {
	for _, v := range proxyVars {
		if strings.EqualFold(v, name) {
			return true
		}
	}
	return false
}

// splice copies a and b into each other until both directions end.
func splice(a, b net.Conn) {
	var wg sync.WaitGroup
	half := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			dst.Close()
		}
	}
	wg.Go(func() { half(a, b) })
	wg.Go(func() { half(b, a) })
	wg.Wait()
	a.Close()
	b.Close()
}
