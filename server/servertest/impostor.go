package servertest

import (
	"bytes"
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/protocol"
)

// Impostor is a program that took the address of a sidecar that was
// killed, as another user of the machine could: it speaks the protocol
// and says yes to everything (initialize, any token, a proof of it that is
// made up, the config file the CLI looks for, servers that do not
// exist), and keeps every byte it is sent.
type Impostor struct {
	// Address is where it listens, as serve.json spells it.
	Address string

	config string
	ln     net.Listener
	conns  sync.WaitGroup

	// mu guards the fields below.
	mu       sync.Mutex
	received bytes.Buffer
	accepted int
	open     []net.Conn
}

// NewImpostor listens on network ("tcp": loopback, or "unix": a socket in
// a directory of the test) until the test ends; it says it serves the
// config file config.
func NewImpostor(t *testing.T, network, config string) *Impostor {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "s")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	im := &Impostor{Address: network + ":" + ln.Addr().String(), config: config, ln: ln}
	var accepting sync.WaitGroup
	accepting.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			im.mu.Lock()
			im.accepted++
			im.open = append(im.open, c)
			im.mu.Unlock()
			im.conns.Go(func() { im.serve(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		accepting.Wait()
		im.mu.Lock()
		for _, c := range im.open {
			c.Close()
		}
		im.mu.Unlock()
		im.conns.Wait()
	})
	return im
}

// serve answers one connection until it ends.
func (im *Impostor) serve(c net.Conn) {
	conn := protocol.NewConn(recorder{c, im}, nil)
	conn.Go(context.Background(), func(_ context.Context, req *jsonrpc2.Request) (any, error) {
		switch req.Method() {
		case protocol.MethodChallenge:
			return &protocol.ChallengeResult{Proof: strings.Repeat("0", 64)}, nil
		case protocol.MethodInitialize:
			return &protocol.InitializeResult{ServerInfo: protocol.Implementation{Name: protocol.ServerName}}, nil
		case protocol.MethodProject:
			return &protocol.Project{ConfigPath: im.config}, nil
		case protocol.MethodServers:
			return &protocol.ServersResult{Servers: []protocol.ServerStatus{{Name: "demo", State: protocol.StateConnected, ToolCount: 4242}}}, nil
		}
		return struct{}{}, nil
	})
	<-conn.Done()
}

// recorder is a connection whose reads the impostor keeps.
type recorder struct {
	io.ReadWriteCloser
	im *Impostor
}

func (r recorder) Read(p []byte) (int, error) {
	n, err := r.ReadWriteCloser.Read(p)
	r.im.mu.Lock()
	r.im.received.Write(p[:n])
	r.im.mu.Unlock()
	return n, err
}

// Received returns every byte sent to the impostor so far, and how many
// connections it took.
func (im *Impostor) Received() (string, int) {
	im.mu.Lock()
	defer im.mu.Unlock()
	return im.received.String(), im.accepted
}
