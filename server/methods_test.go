package server

import (
	"testing"

	"github.com/freecode/freecode/internal/protocol"
)

// The sidecar handles the requests protocol.Methods says a frontend sends,
// and no other of FreeCode's own: the frontends' method tables are
// generated from that table, so a handler it lacks, or one it names that
// is gone, would type a frontend's request that fails.
func TestHandlersMatchMethods(t *testing.T) {
	// freecode/challenge is taken before initialize, on the read loop
	// (handle); shutdown is LSP's.
	handled := map[string]bool{protocol.MethodChallenge: true}
	for m := range requests {
		if m != protocol.MethodShutdown {
			handled[m] = true
		}
	}
	for m := range handled {
		spec, ok := protocol.Lookup(m)
		switch {
		case !ok:
			t.Errorf("%s has a handler but is not in protocol.Methods", m)
		case spec.From != protocol.Frontend || spec.Notification():
			t.Errorf("%s has a handler, but protocol.Methods says the %s sends it (a notification: %v)", m, spec.From, spec.Notification())
		}
	}
	for _, spec := range protocol.Methods {
		if spec.From == protocol.Frontend && !handled[spec.Name] {
			t.Errorf("%s: protocol.Methods says a frontend sends it, and the sidecar has no handler", spec.Name)
		}
	}
}
