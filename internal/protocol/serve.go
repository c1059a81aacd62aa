package protocol

import (
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
	// "unix:PATH" or "tcp:127.0.0.1:PORT".
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
