package mcp

import (
	"net/http"
	"net/http/httptrace"
	"sync"
)

// A call over Streamable HTTP whose answer never comes back leaves the
// SDK with no answer to give and an error of its own ("request
// terminated without response" for a stream that ended, or the POST's
// failure), which tells neither whether the request reached the server
// nor whether the server ran it. Under 2026-07-28 no stream is resumed,
// and under older revisions one is only when the server numbers its
// events, so a lost answer is lost for good. The orchestrator may send
// such a call again only if its tool is read-only or idempotent; for
// that it has to know the answer was lost, and not just that the call
// failed. So each call's request (asker.go) holds a probe, which the round
// tripper finds in the context of the call's POSTs and fills in: whether
// the request went out whole, and the status of the answer.

// answerProbe records what became of the last POST of one call.
type answerProbe struct {
	mu      sync.Mutex
	written bool // the request went out whole
	status  int  // the answer's HTTP status; 0: none came
}

// trace returns r with the probe of the call it is a POST of set to
// record r, when r is one; the caller records the answer with answered.
func (rt *remoteRoundTripper) trace(r *http.Request) (*http.Request, *answerProbe) {
	req := requestOf(r.Context())
	if req == nil || r.Method != http.MethodPost || rt.legacy || !isCall(r) {
		return r, nil
	}
	p := &req.probe
	p.mu.Lock()
	p.written, p.status = false, 0 // this POST is the call's latest
	p.mu.Unlock()
	ctx := httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				p.mu.Lock()
				p.written = true
				p.mu.Unlock()
			}
		},
	})
	return r.WithContext(ctx), p
}

// answered records the status of the answer to the probed POST.
func (p *answerProbe) answered(status int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.status = status
	p.mu.Unlock()
}

// lost reports whether the call's last POST went out whole and got no
// answer but a success status and a stream that ended without the
// answer, or none at all: the server may have run the call.
func (p *answerProbe) lost() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.written && (p.status == 0 || p.status >= 200 && p.status < 300)
}
