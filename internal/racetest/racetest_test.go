package racetest

import (
	"os"
	"strings"
	"testing"
)

// Under -race, the test binary runs with the pause off whatever GORACE it
// was started with: started without it (go test, a sidecar's server),
// init started it again with it.
func TestPauseOff(t *testing.T) {
	if !raceEnabled {
		t.Skip("built without -race: nothing to do")
	}
	if v := os.Getenv("GORACE"); !strings.Contains(v, "atexit_sleep_ms") {
		t.Errorf("GORACE = %q; want atexit_sleep_ms set", v)
	}
}
