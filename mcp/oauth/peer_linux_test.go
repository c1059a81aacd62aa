package oauth

import (
	"net"
	"os"
	"testing"
)

// The socket tables name the user at the other end of a connection to the
// callback: this process's own connection is its user's, let through;
// one reset before it was looked at hides its owner, and is refused, as
// is one closed already.
func TestLoopbackPeer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accept := func(t *testing.T) net.Conn {
		t.Helper()
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	dial := func(t *testing.T) *net.TCPConn {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.Write([]byte("GET /callback?state=s HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		return c.(*net.TCPConn)
	}

	t.Run("open", func(t *testing.T) {
		dial(t)
		p := loopbackPeer(accept(t))
		if want := (peer{known: true, found: true, uid: os.Getuid()}); p != want {
			t.Errorf("the peer of an open connection: %+v, want %+v", p, want)
		}
		if p.refused() {
			t.Error("this user's own connection was refused")
		}
	})
	t.Run("reset", func(t *testing.T) {
		c := dial(t)
		c.SetLinger(0) // close sends a reset
		c.Close()
		s := accept(t)
		// The request is still there to be read: what a reset that
		// passed would deliver.
		buf := make([]byte, 64)
		if n, _ := s.Read(buf); n == 0 {
			t.Log("the request of a reset connection could not be read")
		}
		if p := loopbackPeer(s); !p.refused() {
			t.Errorf("a connection reset before it was looked at was let through: %+v", p)
		}
	})
	t.Run("closed", func(t *testing.T) {
		c := dial(t)
		c.Close()
		if p := loopbackPeer(accept(t)); !p.refused() {
			t.Errorf("a connection closed before it was looked at was let through: %+v", p)
		}
	})
}

func TestPeerRefused(t *testing.T) {
	self := os.Getuid()
	other := 65534
	if self == other {
		other = 65533
	}
	tests := []struct {
		name string
		p    peer
		want bool
	}{
		{"nothing known (not Linux)", peer{}, false},
		{"this user", peer{known: true, found: true, uid: self}, false},
		{"root", peer{known: true, found: true, uid: 0}, false},
		{"another user", peer{known: true, found: true, uid: other}, true},
		{"this user's, closed", peer{known: true, found: true, uid: self, orphan: true}, true},
		{"no socket here, ours established", peer{known: true, ours: true}, false},
		{"no socket here, ours gone", peer{known: true}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.refused(); got != tc.want {
				t.Errorf("refused() = %v, want %v", got, tc.want)
			}
		})
	}
}
