package server_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/server"
	"github.com/freecode/freecode/server/servertest"
	"github.com/freecode/freecode/workspace"
)

// fdLimitEnv makes the test binary a listening sidecar whose soft limit of
// open files is a few above what it has open at start; its value is the
// sidecar's directory.
const fdLimitEnv = "FREECODE_TEST_FDLIMIT_SIDECAR"

func init() {
	if dir := os.Getenv(fdLimitEnv); dir != "" {
		os.Exit(runAtFileLimit(dir))
	}
}

// fdHeadroom is how many descriptors past those open at start the
// sidecar may have: its listener, its workspace's watcher, a few
// connections.
const fdHeadroom = 16

// runAtFileLimit is `freecode serve --listen tcp:127.0.0.1:0` with few
// file descriptors to spare, until SIGTERM.
func runAtFileLimit(dir string) int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	lim.Cur = uint64(len(fds) + fdHeadroom)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	cfg := filepath.Join(dir, "config.json")
	err = server.Run(ctx, &server.RunOptions{
		Listen:    "tcp:127.0.0.1:0",
		ServeFile: filepath.Join(dir, "serve.json"),
		Server: server.Options{
			Logger:    slog.New(slog.NewTextHandler(os.Stderr, nil)),
			Workspace: workspace.Options{Root: dir, ConfigPath: cfg, ResultsDir: filepath.Join(dir, "results")},
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "sidecar:", err)
		return 1
	}
	return 0
}

// A sidecar out of file descriptors, a real limit of its process reached
// by frontends that connect and hold on: its accepts fail with EMFILE,
// and it goes on. Once they are gone it serves the next frontend; it ends
// on SIGTERM, cleanly.
func TestAcceptAtFileLimit(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"mcp": {"servers": []}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fdLimitEnv+"="+dir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	listening, emfile, exited := make(chan string, 1), make(chan struct{}, 1), make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(&log, line)
			if _, addr, ok := strings.Cut(line, "address="); ok && strings.Contains(line, "msg=listening") {
				addr, _, _ = strings.Cut(addr, " ")
				listening <- addr
			}
			if strings.Contains(line, "accepting a frontend failed; retrying") && strings.Contains(line, "too many open files") {
				select {
				case emfile <- struct{}{}:
				default:
				}
			}
		}
		exited <- cmd.Wait()
	}()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("the sidecar's exit: %v\n%s", err, log.String())
			}
		case <-time.After(servertest.HangGuard):
			cmd.Process.Kill()
			t.Errorf("the sidecar did not exit on SIGTERM\n%s", log.String())
		}
	}()
	var addr string
	select {
	case addr = <-listening:
	case err := <-exited:
		exited <- err
		t.Fatalf("the sidecar ended before it listened: %v\n%s", err, log.String())
	case <-time.After(servertest.HangGuard):
		t.Fatalf("the sidecar did not listen\n%s", log.String())
	}

	// Connections the kernel completes while the sidecar has no
	// descriptor left to accept them with.
	var held []net.Conn
	for range 2 * fdHeadroom {
		c, err := net.Dial("tcp", strings.TrimPrefix(addr, "tcp:"))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	select {
	case <-emfile:
	case err := <-exited:
		exited <- err
		t.Fatalf("the sidecar ended when its accept failed: %v\n%s", err, log.String())
	case <-time.After(servertest.HangGuard):
		t.Fatalf("the sidecar's accepts never failed with EMFILE\n%s", log.String())
	}
	for _, c := range held {
		c.Close()
	}

	ctx, cancel := context.WithTimeout(t.Context(), servertest.HangGuard)
	defer cancel()
	fc, err := frontend.DialServeFile(ctx, filepath.Join(dir, "serve.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	if _, err := fc.Initialize(ctx); err != nil {
		t.Fatalf("a frontend once the descriptors are back: %v\n%s", err, log.String())
	}
	if _, err := fc.Project(ctx); err != nil {
		t.Errorf("freecode/project: %v", err)
	}
}
