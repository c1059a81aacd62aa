package server

// The caps of limits.go, for the tests that reach them.
const (
	HandshakeFrame   = handshakeFrame
	HandshakeTimeout = handshakeTimeout
	MaxHandshakes    = maxHandshakes
	HandshakePenalty = handshakePenalty
	MaxInFlight      = maxInFlight
)
