package mcpserve

import (
	"context"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// cacheTTL is how long a 2026-07-28 client may keep server/discover's and
// tools/list's results (SEP-2549's ttlMs). The list changes only when the
// workspace's tools do, which a client that listens (subscriptions/listen)
// hears at once; one that does not sees a change at most this late, and a
// tool it calls after it went is an unknown tool, as for any stale list.
const cacheTTL = time.Minute

// setCacheable is the server's ServerOptions.SetCacheable: every cacheable
// result is private, since the list is the user's (what their servers and
// rules make of it) and is reached with the user's token, so no cache that
// serves others may keep it.
func setCacheable(_ context.Context, _ mcpsdk.Request, c *mcpsdk.Cacheable) {
	c.TTLMs = int(cacheTTL / time.Millisecond)
	c.CacheScope = "private"
}
