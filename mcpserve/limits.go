package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// What the subscriptions/listen streams of 2026-07-28 clients may cost the
// gateway. A stream is a request the server holds for as long as the
// client wants list changes: a goroutine, the request's session and, over
// HTTP, a connection with its buffers, some 90 KB in all. A client needs
// one per session (the go-sdk's client opens one, for the list changes it
// handles); issue 30's opened 4,000 and took `freecode mcp serve` from 23
// to 375 MB. Past a cap a listen is refused at once with
// CodeTooManyListens, whose message says the cap and how many are open;
// the streams held go on. docs/protocol.md states these figures.
//
// Which client a stream is: the gateway's token is the user's, not a
// client's (every HTTP client presents the same one), and a 2026-07-28
// request has no session, so a client is the name it gives in clientInfo
// (its request's _meta, or its session's initialize). One that gives
// another name for each stream gets past its own cap, not the total.
const (
	// maxListensPerClient is how many listen streams one client may hold.
	maxListensPerClient = 16
	// maxListens is how many listen streams the server holds for all its
	// clients together.
	maxListens = 128
)

// CodeTooManyListens is the JSON-RPC error code of a subscriptions/listen
// refused by a cap: an implementation-defined server error of JSON-RPC's
// range. Its data is {"limit", "open", "scope": "client" or "server"}.
const CodeTooManyListens = -32000

// methodListen is the revision's listen request.
const methodListen = "subscriptions/listen"

// listens counts the listen streams the server holds.
type listens struct {
	// mu guards the fields below.
	mu       sync.Mutex
	total    int
	byClient map[string]int // only clients holding one
	// warned are the caps reached since the count was last below them:
	// a flood's refusals are logged once.
	warnedServer bool
	warnedClient map[string]bool
}

// take counts a stream of client in, or says which cap it is past and
// whether that is the first refusal since the count was below it. Call
// the release it returns once the stream ends.
func (l *listens) take(client string) (release func(), refused *jsonrpc.Error, first bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch n := l.byClient[client]; {
	case n >= maxListensPerClient:
		first = !l.warnedClient[client]
		if l.warnedClient == nil {
			l.warnedClient = map[string]bool{}
		}
		l.warnedClient[client] = true
		return nil, tooManyListens("client", n, maxListensPerClient,
			fmt.Sprintf("the client %q holds %d subscriptions/listen streams, the most one client may", shortName(client), n)), first
	case l.total >= maxListens:
		first, l.warnedServer = !l.warnedServer, true
		return nil, tooManyListens("server", l.total, maxListens,
			fmt.Sprintf("this server holds %d subscriptions/listen streams, the most it holds for all its clients", l.total)), first
	}
	if l.byClient == nil {
		l.byClient = map[string]int{}
	}
	l.byClient[client]++
	l.total++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.total--
			l.warnedServer = false
			delete(l.warnedClient, client)
			if l.byClient[client]--; l.byClient[client] == 0 {
				delete(l.byClient, client)
			}
		})
	}, nil, false
}

func tooManyListens(scope string, open, limit int, why string) *jsonrpc.Error {
	data, _ := json.Marshal(map[string]any{"limit": limit, "open": open, "scope": scope})
	return &jsonrpc.Error{
		Code:    CodeTooManyListens,
		Message: why + "; close one to open another",
		Data:    data,
	}
}

// shortName is a client's name cut for a message: it is the client's to
// choose.
func shortName(s string) string {
	if r := []rune(s); len(r) > 64 {
		return string(r[:64]) + "…"
	}
	return s
}

// listenMiddleware counts the subscriptions/listen requests the server
// holds, by client, and refuses those past a cap before the go-sdk takes
// them; the count of one drops when its handler returns, as the client
// closes the stream (HTTP) or cancels it.
func (s *Server) listenMiddleware(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		if method != methodListen {
			return next(ctx, method, req)
		}
		client := ""
		if r, ok := req.(*mcpsdk.SubscriptionsListenRequest); ok {
			if info := r.ClientInfo(); info != nil {
				client = info.Name
			}
		}
		release, refused, first := s.listen.take(client)
		if refused != nil {
			level := slog.LevelDebug
			if first {
				level = slog.LevelWarn
			}
			s.logger.Log(ctx, level, "refusing subscriptions/listen streams past a cap", "client", shortName(client), "reason", refused.Message)
			return nil, refused
		}
		defer release()
		return next(ctx, method, req)
	}
}
