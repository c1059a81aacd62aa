package mcpserve

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/freecode/freecode/config"
)

// ServeFileName is the file, in config.SecretsDir, where an HTTP server
// keeps its URL and token.
const ServeFileName = "mcp-serve.json"

// tokenBytes is the size of a token's randomness: 256 bits.
const tokenBytes = 32

// ServeFile is what mcp-serve.json holds: how to reach the last HTTP
// server the user started, and the token.
type ServeFile struct {
	URL string `json:"url"`
	// Token is the server's token; for a server that runs without one, the
	// token the next server will require.
	Token string `json:"token"`
	PID   int    `json:"pid"`
}

// ServeFilePath returns the user's mcp-serve.json: in config.SecretsDir
// (~/.freecode/auth) whatever config file the server runs, as the token
// gives access to the user's tools and a config file may sit in a
// repository.
func ServeFilePath() (string, error) {
	dir, err := config.SecretsDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, ServeFileName), nil
}

// NewToken returns a new random token.
func NewToken() string {
	b := make([]byte, tokenBytes)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// LoadToken returns the token kept in the serve file at path, so that a
// restarted server keeps the token its clients were configured with. The
// file counts only if it is a regular file that no one else can read (a
// token someone else could have read, or written, is not kept) and holds
// a token of the size NewToken makes.
func LoadToken(path string) (string, bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return "", false
	}
	data, err := config.ReadFile(path)
	if err != nil {
		return "", false
	}
	var f ServeFile
	if json.Unmarshal(data, &f) != nil {
		return "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(f.Token)
	if err != nil || len(raw) != tokenBytes {
		return "", false
	}
	return f.Token, true
}

// WriteServeFile writes f to path, mode 0600, atomically, in a directory
// only the user may list (made 0700 if it is not).
func WriteServeFile(path string, f ServeFile) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("restricting %s: %w", dir, err)
	}
	if err := config.WriteFileAtomic(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
