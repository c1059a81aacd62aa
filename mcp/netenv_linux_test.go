package mcp

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/freecode/freecode/config"
)

// TestSandboxedServerNetworkSettings: in a sandbox with an allow-list the
// sandbox's proxy is the way out, whatever proxy the user's environment
// names, in any case; in a sandbox with the host's network the user's
// proxy is passed. Either way the URLs come without their credentials:
// the sandbox keeps them from its server.
func TestSandboxedServerNetworkSettings(t *testing.T) {
	needBwrap(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	environ := func() []string {
		return append(networkEnviron(), "NPM_CONFIG_PROXY=http://proxy.corp:3128", "npm_config_noproxy=.corp")
	}
	for _, tc := range []struct {
		network string
		want    []string
		notWant []string
	}{
		{config.NetworkDomains,
			[]string{"HTTPS_PROXY=http://127.0.0.1:", "https_proxy=http://127.0.0.1:", "npm_config_proxy=http://127.0.0.1:",
				"NO_PROXY=localhost,127.0.0.1,::1", "npm_config_registry=https://npm.corp/",
				"PIP_INDEX_URL=https://pypi.corp/simple", "NODE_EXTRA_CA_CERTS=/etc/corp-ca.pem"},
			[]string{"proxy.corp", "NPM_CONFIG_PROXY=", "npm_config_noproxy=", "no_proxy=localhost,.corp", "Pr0xy-Pass-1", "pypi-AgEI"}},
		{config.NetworkAll,
			[]string{"HTTPS_PROXY=http://proxy.corp:3128", "https_proxy=http://proxy.corp:3128", "NPM_CONFIG_PROXY=http://proxy.corp:3128",
				"npm_config_noproxy=.corp", "PIP_INDEX_URL=https://pypi.corp/simple"},
			[]string{"127.0.0.1", "Pr0xy-Pass-1", "pypi-AgEI", "proxyuser"}},
	} {
		t.Run(tc.network, func(t *testing.T) {
			b := &config.Sandbox{Network: tc.network}
			if tc.network == config.NetworkDomains {
				b.AllowedDomains = []string{"example.com"}
			}
			c := newTestConnOpts(t, config.Server{
				Name: "sandboxed", Type: config.TypeLocal, Enabled: true, Cwd: t.TempDir(),
				Command: []string{exe, "printenv"}, Env: map[string]string{testServerEnv: "1"},
				Timeout: hangGuard, Sandbox: b,
			}, nil, &ConnOptions{Environ: environ, NoRetry: true})
			if err := c.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			c.Close() // drains stderr
			tail := c.Status().StderrTail
			for _, w := range tc.want {
				if !slices.ContainsFunc(tail, func(l string) bool { return strings.HasPrefix(l, w) }) {
					t.Errorf("no %s in the server's environment:\n%s", w, strings.Join(tail, "\n"))
				}
			}
			for _, nw := range tc.notWant {
				if slices.ContainsFunc(tail, func(l string) bool { return strings.Contains(l, nw) }) {
					t.Errorf("%s in the server's environment:\n%s", nw, strings.Join(tail, "\n"))
				}
			}
		})
	}
}
