package main

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/freecode/freecode/server/servertest"
)

// On a pipe, as an editor runs it, the sidecar's log lines are plain:
// the level first and no timestamp, for the output channel to add its
// own; --log-format text puts slog's time= back.
func TestLogFormat(t *testing.T) {
	bin := servertest.BinaryPath(t, "freecode-serve")
	plain := regexp.MustCompile(`^(DEBUG|INFO|WARN|ERROR) \S`)
	for _, tc := range []struct {
		args      []string
		wantPlain bool
	}{
		{nil, true},
		{[]string{"--log-format", "plain"}, true},
		{[]string{"--log-format", "text"}, false},
	} {
		dir := t.TempDir()
		cmd := exec.Command(bin, append([]string{"--config", dir + "/config.json", "--log-level", "debug"}, tc.args...)...)
		cmd.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
		cmd.Stdin = strings.NewReader("") // EOF before shutdown: it says so, and exits 1
		var stderr strings.Builder
		cmd.Stderr = &stderr
		_ = cmd.Run()
		lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
		if len(lines) == 0 || lines[0] == "" {
			t.Fatalf("%v: nothing logged", tc.args)
		}
		for _, l := range lines {
			if got := plain.MatchString(l) && !strings.Contains(l, "time="); got != tc.wantPlain {
				t.Errorf("%v: line %q plain = %v, want %v", tc.args, l, got, tc.wantPlain)
			}
		}
	}
}
