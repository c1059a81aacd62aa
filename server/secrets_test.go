package server_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

// A server whose entry names a secret that is not set fails at once,
// saying which; the secret a frontend then sends (a password input's) is
// kept in the user's store, starts the server with it in its environment,
// and appears in no other file under HOME, no log line and no message
// the sidecar sends.
func TestSecretSet(t *testing.T) {
	t.Setenv("FREECODE_TOKEN_STORE", "file") // no keychain on a test machine
	const value = "s3cret-f00d-9a7e-value"
	sum := sha256.Sum256([]byte(value))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The server starts only if it got the secret: its hash, not the
	// value, is in the config.
	var entry map[string]any
	if err := json.Unmarshal([]byte(servertest.Server("s", nil)), &entry); err != nil {
		t.Fatal(err)
	}
	entry["command"] = []string{"sh", "-c", `[ "$(printf %s "$API_TOKEN" | sha256sum | cut -c1-64)" = "` + hex.EncodeToString(sum[:]) + `" ] || { echo "wrong API_TOKEN" >&2; exit 3; }; exec "$0"`, exe}
	entry["env"].(map[string]any)["API_TOKEN"] = "${secret:api-token}"
	cfg, err := json.Marshal(map[string]any{"mcp": map[string]any{"servers": []any{entry}}})
	if err != nil {
		t.Fatal(err)
	}
	servertest.Run(t, "-- config.json --\n"+string(cfg)+"\n", func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		failed := ed.AwaitStatus("s", protocol.StateFailed)
		if failed.LastErrorKind != protocol.FailureSecret || !slices.Equal(failed.MissingSecrets, []string{"api-token"}) ||
			!strings.Contains(failed.LastError, "secret api-token is not set") {
			t.Fatalf("without its secret: %+v", failed)
		}
		if _, err := ed.SetSecret(t.Context(), "bad name", value); err == nil || !strings.Contains(err.Error(), "name") {
			t.Errorf("a name ${secret:} cannot hold: %v", err)
		}
		r, err := ed.SetSecret(t.Context(), "api-token", value)
		if err != nil || !slices.Equal(r.Started, []string{"s"}) || !strings.HasSuffix(r.Where, "tokens.json") {
			t.Fatalf("freecode/secrets/set: %+v, %v", r, err)
		}
		st := ed.AwaitStatus("s", protocol.StateConnected)
		if st.LastError != "" || len(st.MissingSecrets) != 0 {
			t.Errorf("connected with its secret: %+v", st)
		}
		if res := execute(t, ed, call("1", "mcp__s__echo", `{"text":"hi"}`)); res.IsError {
			t.Errorf("a call with the secret set: %+v", res)
		}
		sts, err := ed.Servers(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(sts)
		if strings.Contains(string(b), value) {
			t.Error("the statuses hold the secret")
		}
		if !strings.Contains(env.Log(), `"params":{"name":"api-token","value":"***"}`) {
			t.Error("the sidecar's trace does not show the request with its value masked")
		}
		secretOnlyInStore(t, env, value)
	})
}

// secretOnlyInStore checks that a secret a frontend sent is in the secret
// store's file (0600) and nowhere else: in no other file under HOME, and
// in no line of the log but the test's own trace of what the editor sent
// (the sidecar's trace of the request masks it, and no message the
// sidecar sent, no log line of it, holds it).
func secretOnlyInStore(t *testing.T, env *servertest.Env, value string) {
	t.Helper()
	for _, line := range strings.Split(env.Log(), "\n") {
		if strings.Contains(line, value) && !strings.HasPrefix(strings.TrimSpace(line), "editor send ") {
			t.Errorf("a line of the log or of the sidecar's messages holds the secret: %s", line)
		}
	}
	err := filepath.WalkDir(env.Sandbox.Home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), value) && filepath.Base(path) != "tokens.json" {
			t.Errorf("%s holds the secret", path)
		}
		if filepath.Base(path) == "tokens.json" {
			if fi, _ := d.Info(); fi.Mode().Perm() != 0o600 {
				t.Errorf("%s has mode %v", path, fi.Mode().Perm())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
