package proc

import (
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
