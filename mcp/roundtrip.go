package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/freecode/freecode/internal/urlpolicy"
	"github.com/freecode/freecode/mcp/tasks"
)

// errNoAnswer is the cause of a request cut off for want of an answer.
var errNoAnswer = errors.New("server did not answer the request in time")

// remoteRoundTripper adds the configured headers and URL secrets to each
// request, bounds the wait for an answer, and turns "unknown session"
// answers into the 404 the SDK understands as the end of the session.
type remoteRoundTripper struct {
	rc     *remoteClient
	legacy bool
	probe  *httpProbe
}

func (rt *remoteRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	rc := rt.rc
	// A legacy SSE server names the URL the client POSTs to (its endpoint
	// event), and the SDK follows it anywhere. Like the TypeScript SDK,
	// accept only the server's own origin: otherwise a remote server could
	// aim the sidecar's POSTs at another host, or at a service on the
	// user's loopback. (A redirect of a POST is vetted by urlpolicy.CheckRedirect.)
	if rt.legacy && req.Method == http.MethodPost && req.Response == nil && !urlpolicy.SameOrigin(req.URL, rc.real) {
		target := urlpolicy.RedactURL(req.URL.String())
		rc.logger.Warn("refused legacy SSE message endpoint", "url", target)
		perr := &urlpolicy.Error{Target: target, Rule: ruleSSEOrigin}
		rc.refused.CompareAndSwap(nil, perr)
		return nil, perr
	}
	// Bound the wait for the response headers, not the body: a Streamable
	// HTTP answer streams for as long as the tool runs. A call with its own
	// deadline keeps it, except on legacy SSE where the answer is only a
	// 202; notifications and responses get a 202 at once on both.
	bound := false
	if req.Method == http.MethodPost {
		_, hasDeadline := req.Context().Deadline()
		bound = rt.legacy || !hasDeadline || !isCall(req)
	}
	r := req.WithContext(req.Context()) // a shallow copy: the caller's request is not ours to change
	r, probe := rt.trace(r)             // what became of a call's POST (lostanswer.go)
	// Secrets go only to the configured origin: a redirect elsewhere (even
	// one the policy allows) gets none of them.
	u := r.URL
	own := u.Scheme == rc.real.Scheme && u.Host == rc.real.Host
	if own {
		r.Header = make(http.Header, len(req.Header)+len(rc.headers)+1)
		for k, v := range req.Header {
			r.Header[k] = v
		}
		for k, v := range rc.headers {
			r.Header[k] = v
		}
		if rc.real.RawQuery != "" {
			r.URL = rc.withQuery(u)
		}
		if rc.real.User != nil && r.Header.Get("Authorization") == "" {
			pass, _ := rc.real.User.Password()
			r.SetBasicAuth(rc.real.User.Username(), pass)
		}
	}

	if strings.HasPrefix(r.Header.Get("Mcp-Method"), "tasks/") {
		if !own {
			r.Header = r.Header.Clone()
		}
		tasks.SetNameHeader(r) // SEP-2663's routing header, which the go-sdk does not set
	}

	var (
		resp    *http.Response
		err     error
		release context.CancelCauseFunc // ends a bound request once its body is closed
	)
	send := func(r *http.Request) (*http.Response, error) {
		if bound {
			if release != nil {
				release(nil) // a first answer, refused: its body is closed
			}
			resp, release, err = rt.roundTripBound(r)
			return resp, err
		}
		return rc.transport.RoundTrip(r)
	}
	switch {
	case rc.auth == nil || !own: // the sign-in is the configured origin's
		resp, err = send(r)
	case rt.legacy:
		resp, err = rc.auth.Send(r, send)
	default:
		resp, err = send(r)
		if err == nil {
			rc.auth.Observe(r, resp)
		}
	}
	if err != nil {
		return nil, err
	}
	probe.answered(resp.StatusCode)
	// The SDK closes a 202's body unread, and net/http closes a
	// connection whose body was not read to the end: every legacy SSE call
	// would pay for a new TCP connection. A small body, or a 202's
	// (express sends "Accepted" chunked), is drained on close.
	drain := (resp.ContentLength >= 0 && resp.ContentLength <= maxDrain) ||
		(resp.StatusCode == http.StatusAccepted && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"))
	if bound || drain {
		resp.Body = &responseBody{ReadCloser: resp.Body, cancel: release, drain: drain, timeout: rc.timeout}
	}
	if req.Method == http.MethodPost {
		rt.probe.record(resp)
		// The SDK reads a JSON answer whole, with no bound: a server
		// sending gigabytes would take the sidecar's memory down with it.
		if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "application/json" {
			resp.Body = &cappedBody{ReadCloser: resp.Body, left: int64(rc.maxBytes), limit: rc.maxBytes}
		}
	}
	tasks.FoldHTTP(r, resp) // a task answer, made one the go-sdk keeps
	if resp.StatusCode >= 400 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		rt.redactBody(resp)
	}
	if req.Method == http.MethodPost && !rt.legacy {
		resp = rt.checkSession(r, resp)
	}
	return resp, nil
}

// roundTripBound sends r and gives up with errNoAnswer if the response
// headers do not come within the timeout. The returned release ends r's
// context; the caller calls it once the response body is closed.
func (rt *remoteRoundTripper) roundTripBound(r *http.Request) (*http.Response, context.CancelCauseFunc, error) {
	rc := rt.rc
	ctx, cancel := context.WithCancelCause(r.Context())
	timer := time.AfterFunc(rc.timeout, func() { cancel(errNoAnswer) })
	resp, err := rc.transport.RoundTrip(r.WithContext(ctx))
	timer.Stop()
	if err != nil {
		if errors.Is(context.Cause(ctx), errNoAnswer) {
			err = fmt.Errorf("%s %s: no answer within %v: %w", r.Method, rc.endpoint, rc.timeout, errors.Join(errNoAnswer, context.DeadlineExceeded))
		}
		cancel(nil)
		return nil, nil, err
	}
	return resp, cancel, nil
}

// redactBody replaces an error response's body with a copy in which the
// configured secrets are ***: the SDK quotes error bodies in its errors,
// and a server may echo the token it rejected.
func (rt *remoteRoundTripper) redactBody(resp *http.Response) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxDrain))
	resp.Body.Close()
	body = []byte(rt.rc.red().String(string(body)))
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
}

// withQuery returns u with the configured URL's query parameters added
// where u lacks them: the endpoint itself, and a legacy SSE server's
// message URL (which carries its own sessionId).
func (rc *remoteClient) withQuery(u *url.URL) *url.URL {
	out := *u
	if u.RawQuery == "" {
		out.RawQuery = rc.real.RawQuery
		return &out
	}
	q := u.Query()
	for k, vs := range rc.query {
		if !q.Has(k) {
			q[k] = vs
		}
	}
	out.RawQuery = q.Encode()
	return &out
}

// isCall reports whether a POST carries a JSON-RPC request that expects an
// answer (as opposed to a notification or a response). When it cannot
// tell, it says yes: the request then keeps its own deadline.
func isCall(req *http.Request) bool {
	// From protocol 2026-07-28 on the SDK names the method in a header,
	// which spares decoding the body.
	if m := req.Header.Get("Mcp-Method"); m != "" {
		return !strings.HasPrefix(m, "notifications/")
	}
	if req.GetBody == nil {
		return true
	}
	body, err := req.GetBody()
	if err != nil {
		return true
	}
	defer body.Close()
	// Read the top-level keys only, up to params/result/error: the SDK
	// writes jsonrpc, id, method first, so this costs the same for a 1 MB
	// argument as for none.
	dec := json.NewDecoder(body)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return true
	}
	hasID, hasMethod := false, false
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return true
		}
		switch key {
		case "params", "result", "error":
			return hasID && hasMethod
		}
		val, err := dec.Token()
		if err != nil {
			return true
		}
		if _, nested := val.(json.Delim); nested {
			return true // not a shape the SDK writes
		}
		switch key {
		case "id":
			hasID = val != nil
		case "method":
			m, _ := val.(string)
			hasMethod = m != ""
		}
	}
	return hasID && hasMethod
}

// checkSession spots the answer of a server that no longer knows our
// session: 404 (the spec), or 400 naming the session (TypeScript SDK
// servers). The SDK ends the session only on a bare 404, so that is what it
// gets; the Conn then re-initializes.
func (rt *remoteRoundTripper) checkSession(req *http.Request, resp *http.Response) *http.Response {
	sid := req.Header.Get("Mcp-Session-Id")
	if sid == "" || (resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusBadRequest) {
		return resp
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode == http.StatusBadRequest && !bytes.Contains(bytes.ToLower(body), []byte("session")) {
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp
	}
	rt.rc.logger.Info("remote session expired, the server no longer knows it", "status", resp.StatusCode)
	return &http.Response{
		Status:     "404 Not Found",
		StatusCode: http.StatusNotFound,
		Proto:      resp.Proto,
		ProtoMajor: resp.ProtoMajor,
		ProtoMinor: resp.ProtoMinor,
		Header:     http.Header{"Content-Type": {"text/plain"}},
		Body:       http.NoBody,
		Request:    req,
	}
}

// maxDrain bounds what closing a response body reads to keep its
// connection for reuse.
const maxDrain = 64 << 10

// responseBody drains a small body before closing it (so the connection
// goes back to the pool) and releases the request's context.
type responseBody struct {
	io.ReadCloser
	cancel  context.CancelCauseFunc // nil if the request had none of ours
	drain   bool
	timeout time.Duration // bounds the drain: a body that never ends is closed
}

func (b *responseBody) Close() error {
	if b.drain {
		t := time.AfterFunc(b.timeout, func() { b.ReadCloser.Close() })
		io.CopyN(io.Discard, b.ReadCloser, maxDrain)
		t.Stop()
	}
	err := b.ReadCloser.Close()
	if b.cancel != nil {
		b.cancel(nil)
	}
	return err
}

// cappedBody fails a response body that grows past left bytes, so reading
// it whole never holds more than the cap. The session then ends and the
// Conn reconnects.
type cappedBody struct {
	io.ReadCloser
	left  int64
	limit int
}

func (b *cappedBody) tooLarge() error {
	return fmt.Errorf("dropped the server's answer: over maxMessageBytes (%d)", b.limit)
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.tooLarge()
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, b.tooLarge()
	}
	return n, err
}
