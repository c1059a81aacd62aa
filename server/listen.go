package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
)

// Serve accepts frontends on ln and serves each with ServeConn, until ctx
// is done, Done is closed (a frontend sent shutdown, then exit), or ln
// fails. Then it closes ln, ends the connections it accepted and waits for
// them. The last frontend's leaving does not stop it: a sidecar that
// listens outlives its frontends.
//
// An accept that fails for want of resources (no file descriptor left) is
// retried with backoff, as net/http's server does: the frontends already
// connected go on. At most maxHandshakes connections are accepted that
// have not presented the token yet; the next waits until one has, or has
// closed and handshakePenalty passed.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	var conns sync.WaitGroup
	defer func() {
		cancel() // ends the connections
		conns.Wait()
	}()
	go func() {
		select {
		case <-ctx.Done():
		case <-s.done:
		}
		ln.Close()
	}()
	handshakes := make(chan struct{}, maxHandshakes)
	var backoff time.Duration
	for {
		select {
		case handshakes <- struct{}{}:
		case <-ctx.Done():
			return nil
		case <-s.done:
			return nil
		}
		c, err := ln.Accept()
		if err != nil {
			<-handshakes
			select {
			case <-ctx.Done():
				return nil
			case <-s.done:
				return nil
			default:
			}
			if !temporary(err) {
				return fmt.Errorf("accepting frontends: %w", err)
			}
			backoff = min(max(2*backoff, minAcceptBackoff), maxAcceptBackoff)
			s.logger.Warn("accepting a frontend failed; retrying", "error", err, "in", backoff)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return nil
			case <-s.done:
				return nil
			}
			continue
		}
		backoff = 0
		conns.Go(func() {
			if err := s.serveConn(ctx, framedLink(c, func() { <-handshakes })); err != nil {
				s.logger.Debug("frontend connection", "error", err)
			}
		})
	}
}

// The backoff of a failing accept: net/http's.
const (
	minAcceptBackoff = 5 * time.Millisecond
	maxAcceptBackoff = time.Second
)

// temporary reports whether an accept's error may pass: the process or
// the system is out of file descriptors or buffers for now, or the
// connection was reset before it was taken.
func temporary(err error) bool {
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED, syscall.EINTR} {
		if errors.Is(err, errno) {
			return true
		}
	}
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// Listen listens on addr as --listen spells it: "unix:PATH",
// "tcp:HOST:PORT" or "ws://HOST:PORT", HOST a loopback address. Other
// hosts are refused: the sidecar runs tools with the user's rights, and
// its token is the only thing that keeps other users of the machine out.
// It returns the address listened on as serve.json records it (a port 0
// resolved). A unix socket left behind by a sidecar that died is
// replaced; one that answers is not. A ws: listener is served with
// ServeWeb, the others with Serve.
func Listen(addr string) (net.Listener, string, error) {
	if hostPort, ok := webAddress(addr); ok {
		ln, err := listenLoopback(addr, hostPort)
		if err != nil {
			return nil, "", err
		}
		return ln, "ws://" + ln.Addr().String(), nil
	}
	network, rest, ok := strings.Cut(addr, ":")
	if !ok || rest == "" {
		return nil, "", fmt.Errorf("listen address %q: want unix:PATH, tcp:127.0.0.1:PORT or ws://127.0.0.1:PORT", addr)
	}
	switch network {
	case "unix":
		path, err := filepath.Abs(rest)
		if err != nil {
			return nil, "", err
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, "", fmt.Errorf("listening on %s: a process answers on it already", path)
		} else if fi, serr := os.Lstat(path); serr == nil && fi.Mode().Type() == fs.ModeSocket {
			os.Remove(path) // nobody answers: a dead sidecar's socket
		}
		ln, err := listenUnix(path)
		if err != nil {
			return nil, "", err
		}
		// The socket is the user's alone, as serve.json is: born so
		// (listenUnix), and read-write only.
		if err := os.Chmod(path, 0o600); err != nil {
			ln.Close()
			return nil, "", err
		}
		return ln, "unix:" + path, nil
	case "tcp":
		ln, err := listenLoopback(addr, rest)
		if err != nil {
			return nil, "", err
		}
		return ln, "tcp:" + ln.Addr().String(), nil
	}
	return nil, "", fmt.Errorf("listen address %q: want unix:PATH, tcp:127.0.0.1:PORT or ws://127.0.0.1:PORT", addr)
}

// listenLoopback listens on TCP at hostPort, whose host must be a
// loopback address (localhost is 127.0.0.1).
func listenLoopback(addr, hostPort string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("refusing to listen on %q: only a loopback address (127.0.0.1, ::1, localhost) is allowed, since the sidecar runs tools with your rights", host)
	}
	return net.Listen("tcp", net.JoinHostPort(ip.String(), port))
}

// NewToken returns a random token for serve.json: 32 bytes, hex.
func NewToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// CheckServeFile returns an error if path names a sidecar that still
// runs: a second one would take its serve.json from it. A sidecar runs
// if one answers at the file's address and takes the file's token; its
// pid alone proves nothing, since after a crash the pid may be reused by
// any process. A file that names no running sidecar is stale: it is
// ignored, and removed if it is the user's.
func CheckServeFile(path string) error {
	old, err := protocol.ReadServeFile(path)
	if err != nil || old.PID == os.Getpid() {
		return nil
	}
	if processAlive(old.PID) {
		switch probeSidecar(old) {
		case sidecarAnswers:
			return fmt.Errorf("another sidecar (pid %d) listens on %s, per %s", old.PID, old.Address, path)
		case sidecarSilent:
			return fmt.Errorf("another sidecar (pid %d) may listen on %s, per %s: it takes connections but did not answer within %v", old.PID, old.Address, path, serveFileProbe)
		}
	}
	if fi, err := os.Stat(path); err == nil && ownedByUser(fi) {
		RemoveServeFile(path, old.Token) // unless a sidecar started meanwhile replaced it
	}
	return nil
}

// serveFileProbe bounds CheckServeFile's probe of a recorded sidecar.
const serveFileProbe = 5 * time.Second

type probeResult int

const (
	sidecarGone    probeResult = iota // nothing listens, or it refuses the token
	sidecarAnswers                    // a sidecar took the token
	sidecarSilent                     // something took the connection and never answered
)

// probeSidecar connects to the sidecar sf names, as a frontend with its
// token, and leaves again without shutdown: the sidecar goes on.
func probeSidecar(sf protocol.ServeFile) probeResult {
	ctx, cancel := context.WithTimeout(context.Background(), serveFileProbe)
	defer cancel()
	c, err := frontend.Dial(ctx, sf.Address, &frontend.Options{ClientName: "freecode-serve-probe", Token: sf.Token})
	if err != nil {
		return sidecarGone
	}
	defer c.Close()
	_, err = c.Initialize(ctx)
	switch {
	case err == nil:
		return sidecarAnswers
	case ctx.Err() != nil:
		return sidecarSilent
	}
	return sidecarGone
}

// WriteServeFile writes sf to path atomically, readable by the user only.
// It refuses to replace the file of a sidecar that still runs.
func WriteServeFile(path string, sf protocol.ServeFile) error {
	if err := CheckServeFile(path); err != nil {
		return err
	}
	b, err := json.MarshalIndent(sf, "", "  ")
	if err != nil {
		return err
	}
	return config.WriteFileAtomic(path, append(b, '\n'), 0o600)
}

// RemoveServeFile removes path if it is still the file of this sidecar
// (token): a sidecar started since may have replaced it.
func RemoveServeFile(path, token string) error {
	sf, err := protocol.ReadServeFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil || sf.Token != token {
		return err
	}
	return os.Remove(path)
}
