package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcptasks"
)

// serveHTTP serves s at http://addr/mcp until ctx is done, every revision
// at once (mcptasks.HTTPHandler: 2026-07-28 without sessions, the task
// methods' Mcp-Name checked).
func serveHTTP(ctx context.Context, addr string, s *mcp.Server) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcptasks.HTTPHandler(s))
	srv := &http.Server{Handler: mux}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	fmt.Fprintf(os.Stderr, "demo-server: listening on http://%s/mcp\n", l.Addr())
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
