package mcp

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// A sign-in holds the discovery's wait: whether the wait would have run
// out during it or not, it starts again in full once the sign-in ends.
func TestDiscoveryWaitHeldBySignIn(t *testing.T) {
	for _, signIn := range []time.Duration{500 * time.Millisecond, 5 * time.Second} {
		t.Run(signIn.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &discoveryProbe{wait: 2 * time.Second}
				var gaveUp atomic.Int64 // when, since the start
				start := time.Now()
				stop := p.afterBegun(t.Context(), nil, func() { gaveUp.Store(int64(time.Since(start))) })
				defer stop()
				time.Sleep(time.Second) // the 401, the metadata
				release := p.hold()
				time.Sleep(signIn) // the user in the browser
				release()
				time.Sleep(p.wait - time.Millisecond)
				synctest.Wait()
				if g := gaveUp.Load(); g != 0 {
					t.Fatalf("gave up %v after the start, within the wait that followed the sign-in", time.Duration(g))
				}
				time.Sleep(time.Millisecond)
				synctest.Wait()
				if got, want := time.Duration(gaveUp.Load()), time.Second+signIn+p.wait; got != want {
					t.Errorf("gave up %v after the start, want %v: the wait in full after the sign-in", got, want)
				}
			})
		})
	}
}
