// Command registry-fixture-server is a test program: the fixture MCP
// Registry of package registrytest on loopback, for tests outside go test
// (the VS Code extension's end-to-end run). It is never built into bin/.
//
// It prints one JSON line on stdout once it listens,
//
//	{"url": "http://127.0.0.1:P"}
//
// and serves until its stdin closes or it gets SIGINT or SIGTERM.
// -everything-version is the version of server-everything it publishes.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/freecode/freecode/internal/registry/registrytest"
)

func main() {
	everything := flag.String("everything-version", "2026.8.31", "the version of server-everything the registry publishes")
	flag.Parse()
	reg := registrytest.New(registrytest.Servers(*everything))
	defer reg.Close()

	line, _ := json.Marshal(map[string]string{"url": reg.URL})
	fmt.Printf("%s\n", line)

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	<-ctx.Done()
}
