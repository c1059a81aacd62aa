package protocol

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ServeFile is the contents of serve.json, which a sidecar listening on a
// socket keeps while it runs, so that frontends on the same machine find
// it: its address, its pid and the token every socket frontend sends as
// initializationOptions.token. The file is the user's alone (mode 0600).
type ServeFile struct {
	// Address is where the sidecar listens, as --listen spells it:
	// "unix:PATH", "tcp:127.0.0.1:PORT" or "ws://127.0.0.1:PORT".
	Address string `json:"address"`
	PID     int    `json:"pid"`
	// Token is 32 random bytes, hex.
	Token string `json:"token"`
}

// DefaultServeFilePath returns ~/.freecode/serve.json.
func DefaultServeFilePath() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".freecode", "serve.json"), nil
}

// ReadServeFile reads a serve.json.
func ReadServeFile(path string) (ServeFile, error) {
	var sf ServeFile
	b, err := os.ReadFile(path)
	if err != nil {
		return sf, err
	}
	if err := json.Unmarshal(b, &sf); err != nil {
		return sf, fmt.Errorf("%s: %w", path, err)
	}
	return sf, nil
}

// ChallengeParams are the params of freecode/challenge: a frontend's
// fresh random nonce, hex (16 to 64 bytes). A socket frontend sends it
// before initialize to whatever listens at serve.json's address, and sends
// the token there only if the answer proves the listener holds it: a
// sidecar killed outright leaves its serve.json behind, and any local
// program may bind the address it names.
type ChallengeParams struct {
	Nonce string `json:"nonce"`
}

// ChallengeResult is the result of freecode/challenge: TokenProof of the
// sidecar's token and the nonce.
type ChallengeResult struct {
	Proof string `json:"proof"`
}

// proofLabel keeps a proof of the token for this purpose apart from any
// other MAC that might one day be keyed with it.
const proofLabel = "freecode-serve token proof v1\n"

// TokenProof is the proof that the holder of token answers to a nonce:
// HMAC-SHA256 keyed with the token, of proofLabel and the nonce, hex. It
// tells nothing of the token, so a frontend can ask for it of whatever
// listens at serve.json's address before it sends the token there.
func TokenProof(token, nonce string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(proofLabel))
	m.Write([]byte(nonce))
	return hex.EncodeToString(m.Sum(nil))
}

// ProofHolds reports whether proof is TokenProof(token, nonce), in
// constant time.
func ProofHolds(token, nonce, proof string) bool {
	return hmac.Equal([]byte(TokenProof(token, nonce)), []byte(proof))
}

// WebCodeResult is the result of freecode/web/code (params {}), which only
// a frontend that presented the token may send: a one-time code that
// signs a browser in to the page of a sidecar listening on ws:, and the
// page's URL with it. The first GET of URL spends the code and sets the
// session cookie; the code is worth nothing after ExpiresAt.
type WebCodeResult struct {
	Code string `json:"code"`
	// URL is http://127.0.0.1:PORT/?code=CODE.
	URL string `json:"url"`
	// ExpiresAt is RFC 3339.
	ExpiresAt string `json:"expiresAt"`
}

// GatewayResult is the result of freecode/gateway/open (params {}), which
// only a frontend that presented the token may send, and no browser: the
// sidecar's MCP endpoints for an editor's own chat (VS Code's), one per
// FreeCode server, over the sidecar's own workspace and servers. Each
// lists its server's tools under their own names and runs every call
// through the sidecar's rules; each requires Token as a bearer token. The
// first request starts the listener; later ones answer the same token and
// port, with the servers as they are then.
type GatewayResult struct {
	// Token is the bearer token every endpoint requires
	// ("Authorization: Bearer <token>"), for the sidecar's life.
	Token string `json:"token"`
	// Servers are the FreeCode servers whose tools can come (all but the
	// disabled, those awaiting the user's approval and those the
	// organization blocks), by name.
	Servers []GatewayServer `json:"servers"`
}

// GatewayServer is one FreeCode server's MCP endpoint.
type GatewayServer struct {
	Name string `json:"name"`
	// URL is its Streamable HTTP endpoint,
	// http://127.0.0.1:PORT/mcp/<the name, path-escaped>.
	URL string `json:"url"`
}
