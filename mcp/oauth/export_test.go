package oauth

// What the sign-in tests (package oauth_test, which drive a sign-in
// through the real MCP client) read and edit of the token store.
type (
	TokenRecord  = tokenRecord
	ClientRecord = clientRecord
)

var (
	SignInKey = signInKey
	ClientKey = clientKey
)

const (
	ClientRefusedReason = clientRefusedReason
	ExpiredReason       = expiredReason
	SignedOutReason     = signedOutReason
	MaxStepUps          = maxStepUps
)

// Port is the loopback port a kept registration's redirect URI names.
func (r *clientRecord) Port() int { return r.port() }
