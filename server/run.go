package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/mcp/sandbox"
)

// RunOptions configure Run: what freecode-serve and `freecode serve` take
// from their flags.
type RunOptions struct {
	// Server configures the server. With Listen, its Workspace's Root
	// (default: the current directory) and ConfigPath are the sidecar's
	// project and config; with stdio they are what the editor's
	// initialize leaves out.
	Server Options
	// Listen is the address to listen on ("unix:PATH",
	// "tcp:127.0.0.1:PORT" or "ws://127.0.0.1:PORT"); empty means stdio.
	Listen string
	// Web configures a sidecar listening on ws:, for browsers: the page
	// it serves and the origins allowed besides its own.
	Web WebOptions
	// ServeFile is where a sidecar that listens records its address and
	// token (default ~/.freecode/serve.json).
	ServeFile string
	// Stdin and Stdout are the stdio sidecar's streams (default os.Stdin
	// and os.Stdout).
	Stdin  io.Reader
	Stdout io.Writer
	// OnListening, if set, is called with the address once the sidecar
	// listens and serve.json is written.
	OnListening func(addr string)
}

// ErrNoShutdown is Run's error when the editor ended the stdio sidecar
// (exit, or stdin closed) without shutdown first; LSP has the process
// exit with status 1 then. Everything was stopped all the same.
var ErrNoShutdown = errors.New("the editor ended the sidecar without shutdown")

// Run runs a sidecar until it is done: with stdio, until the editor sends
// exit or closes stdin; listening, until a frontend sends shutdown and
// then exit (or closes its connection). When
// ctx is done first (a signal), it stops the same way. Either way every
// MCP server is stopped and every process it started reaped before Run
// returns.
func Run(ctx context.Context, opts *RunOptions) error {
	if opts.Listen != "" {
		return runListen(ctx, opts)
	}
	return runStdio(ctx, opts)
}

func runStdio(ctx context.Context, opts *RunOptions) error {
	in, out := opts.Stdin, opts.Stdout
	if in == nil {
		in = closableReader(os.Stdin)
	}
	if out == nil {
		out = os.Stdout
	}
	s := New(&opts.Server)
	err := s.ServeConn(ctx, stdio{in, out})
	s.mu.Lock()
	shutDown := s.state == serverShutDown
	s.mu.Unlock()
	s.Close()
	switch {
	case err != nil:
		return err
	case ctx.Err() != nil:
		return nil // a signal: stopped cleanly
	case !shutDown:
		return ErrNoShutdown
	}
	return nil
}

// stdio is the editor's end of a stdio sidecar.
type stdio struct {
	io.Reader
	io.Writer
}

// Close closes stdin if it can: what unblocks the read loop.
func (s stdio) Close() error {
	if c, ok := s.Reader.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func runListen(ctx context.Context, opts *RunOptions) error {
	path := opts.ServeFile
	if path == "" {
		var err error
		if path, err = protocol.DefaultServeFilePath(); err != nil {
			return fmt.Errorf("locating serve.json: %w", err)
		}
	}
	sopts := opts.Server
	if sopts.Workspace.Root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		sopts.Workspace.Root = wd
	}
	root, err := filepath.Abs(sopts.Workspace.Root)
	if err != nil {
		return err
	}
	sopts.Workspace.Root = root
	sopts.Token = NewToken()
	// Before any server starts: a second sidecar would run them twice.
	if err := CheckServeFile(path); err != nil {
		return err
	}
	ln, addr, err := Listen(opts.Listen)
	if err != nil {
		return err
	}
	// The socket and the file that holds its token: no sandboxed server
	// reaches either, wherever they are.
	sandbox.Guard(path)
	if sock, ok := strings.CutPrefix(addr, "unix:"); ok {
		sandbox.Guard(sock)
	}
	s := New(&sopts)
	defer s.Close()
	if err := s.Open(ctx); err != nil {
		ln.Close()
		return err
	}
	if err := WriteServeFile(path, protocol.ServeFile{Address: addr, PID: os.Getpid(), Token: sopts.Token}); err != nil {
		ln.Close()
		return err
	}
	defer RemoveServeFile(path, sopts.Token)
	s.logger.Info("listening", "address", addr, "serveFile", path, "project", root)
	if opts.OnListening != nil {
		opts.OnListening(addr)
	}
	if _, ok := webAddress(addr); ok {
		err = s.ServeWeb(ctx, ln, &opts.Web)
	} else {
		err = s.Serve(ctx, ln)
	}
	s.Close()
	return err
}
