package sandbox

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/config"
)

// TestSandboxEnvProxy: with an allow-list the user's proxy settings, in
// any case, are left out, so that the sandbox's own, set after them, are
// the only ones; with the host's network they are the server's.
func TestSandboxEnvProxy(t *testing.T) {
	env := []string{
		"PATH=/bin", "TMPDIR=/var/tmp", "HTTPS_PROXY=http://corp:3128", "https_proxy=http://corp:3128",
		"Http_Proxy=http://corp:3128", "ALL_PROXY=socks5://corp:1080", "NO_PROXY=.corp", "no_proxy=.corp",
		"NPM_CONFIG_PROXY=http://corp:3128", "npm_config_https_proxy=http://corp:3128", "npm_config_noproxy=.corp",
		"NODE_USE_ENV_PROXY=0", "npm_config_registry=https://npm.corp/", "NODE_EXTRA_CA_CERTS=/ca.pem",
	}
	for _, tc := range []struct {
		network string
		want    []string
	}{
		{config.NetworkDomains, []string{"NODE_EXTRA_CA_CERTS=/ca.pem", "PATH=/bin", "TMPDIR=/tmp", "npm_config_registry=https://npm.corp/"}},
		{config.NetworkAll, append(slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return kv == "TMPDIR=/var/tmp" }), "TMPDIR=/tmp")},
		{config.NetworkNone, append(slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return kv == "TMPDIR=/var/tmp" }), "TMPDIR=/tmp")},
	} {
		t.Run(tc.network, func(t *testing.T) {
			got := sandboxEnv(env, Policy{Network: tc.network})
			slices.Sort(got)
			slices.Sort(tc.want)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("sandbox environment (-want +got):\n%s", diff)
			}
			if tc.network != config.NetworkDomains {
				return
			}
			// What the bridge runs the server with: the sandbox's proxy
			// appended, and for every name the last value wins.
			for _, kv := range proxyEnv("http://127.0.0.1:1") {
				name, _, _ := strings.Cut(kv, "=")
				if slices.ContainsFunc(got, func(g string) bool { n, _, _ := strings.Cut(g, "="); return strings.EqualFold(n, name) }) {
					t.Errorf("%s is in the environment the sandbox's proxy settings are added to", name)
				}
			}
		})
	}
}
