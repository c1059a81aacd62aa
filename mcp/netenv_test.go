package mcp

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcptest"
)

// networkEnviron is a sidecar environment behind an authenticating proxy,
// with a private registry and index, a corporate CA, and the tokens that
// sit beside those settings and that no server may see.
func networkEnviron() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=/home/tester",
		"HTTPS_PROXY=http://proxyuser:Pr0xy-Pass-1@proxy.corp:3128", "https_proxy=http://proxyuser:Pr0xy-Pass-1@proxy.corp:3128",
		"HTTP_PROXY=http://proxy.corp:3128", "NO_PROXY=localhost,.corp", "no_proxy=localhost,.corp",
		"npm_config_registry=https://npm.corp/", "npm_config_strict_ssl=true", "npm_config_cafile=/etc/corp-ca.pem",
		"NODE_EXTRA_CA_CERTS=/etc/corp-ca.pem", "SSL_CERT_FILE=/etc/corp-ca.pem", "REQUESTS_CA_BUNDLE=/etc/corp-ca.pem",
		"PIP_INDEX_URL=https://__token__:pypi-AgEIcHlwaS5vcmc1234@pypi.corp/simple", "UV_DEFAULT_INDEX=https://uv.corp/simple",
		"npm_config__authToken=npm-secret-1", "NPM_TOKEN=npm-secret-2", "npm_config_//npm.corp/:_authToken=npm-secret-3",
		"ANTHROPIC_API_KEY=sk-ant-secret",
	}
}

// TestServerGetsNetworkSettings: a local server started from a sidecar
// behind a proxy sees the user's proxy, registry, index and CA settings,
// and none of the tokens beside them.
func TestServerGetsNetworkSettings(t *testing.T) {
	c := newTestConnOpts(t, testSrv(t, "netenv"), nil, &ConnOptions{Environ: networkEnviron})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	env := strings.Split(callText(t, c, "env", nil), "\n")
	for _, kv := range networkEnviron() {
		secret := strings.Contains(kv, "secret") || strings.HasPrefix(kv, "NPM_TOKEN=")
		if got := slices.Contains(env, kv); got == secret {
			t.Errorf("server environment has %s: %v, want %v", kv, got, !secret)
		}
	}
}

// TestNetworkCredentialsHidden: a server that prints its environment shows
// the user's proxy and index URLs in its stderr tail, the status and the
// logs without their passwords.
func TestNetworkCredentialsHidden(t *testing.T) {
	for _, args := range [][]string{{"printenv"}, {"printenv", "exit"}} {
		t.Run(strings.Join(args, "+"), func(t *testing.T) {
			var logs lockedBuffer
			logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			c := newTestConnOpts(t, testSrv(t, "printer", args...), nil, &ConnOptions{Environ: networkEnviron, Logger: logger, NoRetry: true})
			startErr := c.Start(t.Context())
			if (startErr != nil) != slices.Contains(args, "exit") {
				t.Fatalf("Start = %v", startErr)
			}
			c.Close() // drains stderr
			st := c.Status()
			shown := append([]string{st.LastError, logs.String()}, st.StderrTail...)
			if startErr != nil {
				shown = append(shown, startErr.Error())
			}
			all := strings.Join(shown, "\n")
			for _, secret := range []string{"Pr0xy-Pass-1", "pypi-AgEIcHlwaS5vcmc1234"} {
				if strings.Contains(all, secret) {
					t.Errorf("credential %q shown:\n%s", secret, all)
				}
			}
			for _, want := range []string{"HTTPS_PROXY=http://proxyuser:***@proxy.corp:3128", "PIP_INDEX_URL=https://__token__:***@pypi.corp/simple"} {
				if !slices.Contains(st.StderrTail, want) {
					t.Errorf("stderr tail = %q, want %q", st.StderrTail, want)
				}
			}
		})
	}
}

// TestNPXUsesUserRegistry: npx in a server goes to the registry of the
// sidecar's environment (npm_config_registry), as the user's shell does,
// not to the public one. The registry here answers 404 to everything, so
// npx fails at once, having asked it.
func TestNPXUsesUserRegistry(t *testing.T) {
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skip("npx is not installed")
	}
	var (
		mu    sync.Mutex
		asked []string
	)
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer registry.Close()
	home := t.TempDir()
	environ := func() []string {
		return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "npm_config_registry=" + registry.URL + "/"}
	}
	srv := config.Server{
		Name: "npx", Type: config.TypeLocal, Enabled: true, Scope: config.ScopeUser,
		Command: []string{npx, "-y", "freecode-test-no-such-server"},
		// A cache of its own, empty: npx must ask the registry.
		Env:     map[string]string{"npm_config_cache": filepath.Join(t.TempDir(), "npm")},
		Timeout: 30 * time.Second,
	}
	c := newTestConnOpts(t, srv, mcptest.NewRecorder(), &ConnOptions{Environ: environ, NoRetry: true})
	if err := c.Start(t.Context()); err == nil {
		t.Fatal("Start succeeded with a package the registry does not have")
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(asked, "/freecode-test-no-such-server") {
		t.Errorf("the registry of the sidecar's environment was asked %q, want the package; stderr:\n%s",
			asked, strings.Join(c.Status().StderrTail, "\n"))
	}
}

// TestApprovalHidesURLPassword: a project's entry that writes a proxy's
// password into its env is shown for approval without it; a ${env:NAME}
// reference, which says what of the user's the project asks for, is shown
// as written.
func TestApprovalHidesURLPassword(t *testing.T) {
	srv := config.Server{Name: "p", Type: config.TypeLocal, Scope: config.ScopeProject, Command: []string{"x"}, Env: map[string]string{
		"HTTPS_PROXY":  "http://proxyuser:Pr0xy-Pass-1@proxy.corp:3128",
		"REGISTRY":     "https://u:p%40ss@npm.corp/path?x=1",
		"DATABASE_URL": "postgres://app:${env:DB_PASS}@db/x",
		"NO_PASSWORD":  "http://user@proxy.corp:3128",
		"PLAIN":        "http://proxy.corp:3128/a@b",
		"MODE":         "deep",
	}}
	want := map[string]string{
		"HTTPS_PROXY":  "http://proxyuser:***@proxy.corp:3128",
		"REGISTRY":     "https://u:***@npm.corp/path?x=1",
		"DATABASE_URL": "postgres://app:${env:DB_PASS}@db/x",
		"NO_PASSWORD":  "http://user@proxy.corp:3128",
		"PLAIN":        "http://proxy.corp:3128/a@b",
		"MODE":         "deep",
	}
	a := ApprovalOf(srv)
	if diff := cmp.Diff(want, a.Env); diff != "" {
		t.Errorf("approval env (-want +got):\n%s", diff)
	}
	if a.EntryHash != config.EntryHash(srv) {
		t.Error("the approval's hash is not the entry's as written")
	}
}
