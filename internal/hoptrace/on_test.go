//go:build hoptrace

package hoptrace

import (
	"strings"
	"testing"
)

// The stages are timed from their points, a Take once per Mark, and the
// table leaves out each stage's first quarter (the warm-up).
func TestStages(t *testing.T) {
	for range 8 {
		Mark(FromRequest)
		Stage(FromRequest, "1 first")
		Take(FromRequest, "2 taken")
		Take(FromRequest, "2 taken") // the point is gone: not recorded
	}
	Stage("never marked", "3 none")
	var b strings.Builder
	report(&b)
	out := b.String()
	for _, want := range []string{"1 first", "2 taken"} {
		line := ""
		for l := range strings.Lines(out) {
			if strings.Contains(l, want) {
				line = l
			}
		}
		// 8 samples, the first 2 left out.
		if f := strings.Fields(line); len(f) < 5 || f[len(f)-3] != "6" {
			t.Errorf("%q: line %q, want 6 samples\n%s", want, line, out)
		}
	}
	if strings.Contains(out, "3 none") {
		t.Errorf("a stage from a point never marked was recorded:\n%s", out)
	}
}
