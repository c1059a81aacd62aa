package server

import "time"

// The caps of limits.go, for the tests that reach them.
const (
	HandshakeFrame   = handshakeFrame
	HandshakeTimeout = handshakeTimeout
	MaxHandshakes    = maxHandshakes
	HandshakePenalty = handshakePenalty
	MaxInFlight      = maxInFlight
)

// WebCodeTTL is how long a sign-in code waits to be used.
const WebCodeTTL = webCodeTTL

// ShiftWebClock moves the clock of s's sign-in codes by d: a code minted
// before is d older.
func ShiftWebClock(s *Server, d time.Duration) {
	s.mu.Lock()
	a := s.web
	s.mu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now
	a.now = func() time.Time { return now().Add(d) }
}

// MintWebCode mints a sign-in code of s, which serves browsers.
func MintWebCode(s *Server) string {
	s.mu.Lock()
	a := s.web
	s.mu.Unlock()
	code, _ := a.mint()
	return code
}
