package proc

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEnv(t *testing.T) {
	base := []string{
		"PATH=/bin", "HOME=/h", "USER=u", "LOGNAME=u", "SHELL=/bin/sh", "TERM=xterm", "LANG=C.UTF-8",
		"LC_ALL=C", "TZ=UTC", "TMPDIR=/tmp", "XDG_CACHE_HOME=/c", "ANTHROPIC_API_KEY=secret",
		"OPENAI_API_KEY=secret", "AWS_SECRET_ACCESS_KEY=secret", "SystemRoot=C:\\Windows", "garbage",
		// Near misses of allowed names: whole names only, case counts
		// outside Windows, and only LC_/XDG_ are families.
		"PATHX=secret", "HOME_TOKEN=secret", "path=secret", "LCTOKEN=secret", "XDGKEY=secret", "=C:=C:\\",
	}
	allowed := []string{
		"HOME=/h", "LANG=C.UTF-8", "LC_ALL=C", "LOGNAME=u", "PATH=/bin", "SHELL=/bin/sh",
		"TERM=xterm", "TMPDIR=/tmp", "TZ=UTC", "USER=u", "XDG_CACHE_HOME=/c",
	}
	tests := []struct {
		name    string
		own     map[string]string
		inherit bool
		goos    string
		want    []string
	}{
		{"allow-list", nil, false, "linux", allowed},
		{"own env on top", map[string]string{"PATH": "/mine", "TOKEN": "t"}, false, "linux",
			[]string{"HOME=/h", "LANG=C.UTF-8", "LC_ALL=C", "LOGNAME=u", "PATH=/mine", "SHELL=/bin/sh",
				"TERM=xterm", "TMPDIR=/tmp", "TOKEN=t", "TZ=UTC", "USER=u", "XDG_CACHE_HOME=/c"}},
		{"windows system vars", nil, false, "windows", []string{
			"HOME=/h", "LANG=C.UTF-8", "LC_ALL=C", "LOGNAME=u", "PATH=/bin", "SHELL=/bin/sh", "SystemRoot=C:\\Windows",
			"TERM=xterm", "TMPDIR=/tmp", "TZ=UTC", "USER=u", "XDG_CACHE_HOME=/c",
			"path=secret"}}, // Windows names ignore case: this is PATH there
		{"inheritEnv", nil, true, "linux", []string{
			"ANTHROPIC_API_KEY=secret", "AWS_SECRET_ACCESS_KEY=secret", "HOME=/h", "HOME_TOKEN=secret", "LANG=C.UTF-8",
			"LCTOKEN=secret", "LC_ALL=C", "LOGNAME=u", "OPENAI_API_KEY=secret", "PATH=/bin", "PATHX=secret",
			"SHELL=/bin/sh", "SystemRoot=C:\\Windows", "TERM=xterm", "TMPDIR=/tmp", "TZ=UTC", "USER=u",
			"XDGKEY=secret", "XDG_CACHE_HOME=/c", "path=secret"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := envFor(base, tc.own, tc.inherit, tc.goos)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEnvNetwork: the user's proxy, registry and CA settings reach a
// server by default, and none of npm's or pip's tokens does; the entry's
// own setting wins in every case a tool may read.
func TestEnvNetwork(t *testing.T) {
	network := []string{
		"ALL_PROXY=socks5://p:1080", "HTTPS_PROXY=http://u:pw@proxy:3128", "HTTP_PROXY=http://proxy:3128",
		"NODE_EXTRA_CA_CERTS=/ca.pem", "NODE_USE_ENV_PROXY=1", "NO_PROXY=localhost,.corp",
		"NPM_CONFIG_REGISTRY=https://npm.corp/", "PIP_CERT=/ca.pem", "PIP_EXTRA_INDEX_URL=https://extra.corp/simple",
		"PIP_INDEX_URL=https://pypi.corp/simple", "REQUESTS_CA_BUNDLE=/ca.pem", "SSL_CERT_DIR=/certs",
		"SSL_CERT_FILE=/ca.pem", "UV_DEFAULT_INDEX=https://uv.corp/simple", "UV_EXTRA_INDEX_URL=https://x.corp/simple",
		"UV_INDEX=https://i.corp/simple", "UV_INDEX_URL=https://uv.corp/simple", "all_proxy=socks5://p:1080",
		"http_proxy=http://proxy:3128", "https_proxy=http://u:pw@proxy:3128", "no_proxy=localhost",
		"npm_config_ca=CERT", "npm_config_cafile=/ca.pem", "npm_config_https_proxy=http://proxy:3128",
		"npm_config_noproxy=.corp", "npm_config_proxy=http://proxy:3128", "npm_config_strict_ssl=false",
		"npm_config_cache=/c",
	}
	tokens := []string{
		"npm_config__authToken=npm-secret", "npm_config__auth=dXNlcjpwYXNz", "npm_config_//npm.corp/:_authToken=npm-secret",
		"NPM_TOKEN=npm-secret", "npm_config_token=npm-secret", "NPM_CONFIG__AUTHTOKEN=npm-secret",
		"npm_config_userconfig=/u/.npmrc", "npm_config_registryx=https://evil/",
		"PIP_PASSWORD=secret", "UV_INDEX_PASSWORD=secret", "HTTPS_PROXY_PASSWORD=secret", "GITHUB_TOKEN=secret",
	}
	base := append(append([]string{"PATH=/bin"}, network...), tokens...)
	tests := []struct {
		name string
		own  map[string]string
		goos string
		want []string
	}{
		{"linux", nil, "linux", append([]string{"PATH=/bin"}, network...)},
		{"windows", nil, "windows", append([]string{"PATH=/bin"}, network...)},
		{"own proxy wins in both cases", map[string]string{"HTTPS_PROXY": "http://mine:8080", "npm_config_registry": "https://mine/"}, "linux",
			[]string{
				"ALL_PROXY=socks5://p:1080", "HTTPS_PROXY=http://mine:8080", "HTTP_PROXY=http://proxy:3128",
				"NODE_EXTRA_CA_CERTS=/ca.pem", "NODE_USE_ENV_PROXY=1", "NO_PROXY=localhost,.corp",
				"PATH=/bin", "PIP_CERT=/ca.pem", "PIP_EXTRA_INDEX_URL=https://extra.corp/simple",
				"PIP_INDEX_URL=https://pypi.corp/simple", "REQUESTS_CA_BUNDLE=/ca.pem", "SSL_CERT_DIR=/certs",
				"SSL_CERT_FILE=/ca.pem", "UV_DEFAULT_INDEX=https://uv.corp/simple", "UV_EXTRA_INDEX_URL=https://x.corp/simple",
				"UV_INDEX=https://i.corp/simple", "UV_INDEX_URL=https://uv.corp/simple", "all_proxy=socks5://p:1080",
				"http_proxy=http://proxy:3128", "no_proxy=localhost",
				"npm_config_ca=CERT", "npm_config_cafile=/ca.pem", "npm_config_https_proxy=http://proxy:3128",
				"npm_config_noproxy=.corp", "npm_config_proxy=http://proxy:3128", "npm_config_registry=https://mine/",
				"npm_config_strict_ssl=false", "npm_config_cache=/c",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := envFor(base, tc.own, false, tc.goos)
			want := slices.Sorted(slices.Values(tc.want))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}
