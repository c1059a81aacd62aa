package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress is one progress notification for a tool call.
type Progress struct {
	Progress float64
	Total    float64
	Message  string
}

// progressSub is one call's progress subscription. The SDK hands
// notifications to its handler on a queue of its own, so one sent just
// before the call's result can reach the handler after the result: the
// stdio line filter counts them as they arrive (seen) and CallTool waits,
// briefly, until the handler has delivered as many.
type progressSub struct {
	fn        func(Progress)
	seen      int
	delivered int
	caughtUp  chan struct{} // non-nil while CallTool waits
}

func (c *Conn) onProgress(_ context.Context, req *mcpsdk.ProgressNotificationClientRequest) {
	p := req.Params
	if p == nil {
		return
	}
	key := tokenKey(p.ProgressToken)
	c.progressMu.Lock()
	sub := c.progress[key]
	c.progressMu.Unlock()
	if sub == nil {
		c.logger.Debug("progress for an unknown token", "token", key)
		return
	}
	sub.fn(Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
	c.progressMu.Lock()
	sub.delivered++
	if sub.caughtUp != nil && sub.delivered >= sub.seen {
		close(sub.caughtUp)
		sub.caughtUp = nil
	}
	c.progressMu.Unlock()
}

// noteProgress counts a progress notification read off a server's stdout,
// before the SDK queues it.
func (c *Conn) noteProgress(line []byte) {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			ProgressToken any `json:"progressToken"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.Method != "notifications/progress" {
		return
	}
	key := tokenKey(msg.Params.ProgressToken)
	c.progressMu.Lock()
	if sub := c.progress[key]; sub != nil {
		sub.seen++
	}
	c.progressMu.Unlock()
}

// progressDrainWait bounds how long a finished call waits for progress
// notifications that arrived before its result.
const progressDrainWait = time.Second

// drainProgress waits until every progress notification of sub that
// arrived before the call's result has been delivered.
func (c *Conn) drainProgress(ctx context.Context, sub *progressSub) {
	c.progressMu.Lock()
	if sub.delivered >= sub.seen {
		c.progressMu.Unlock()
		return
	}
	ch := make(chan struct{})
	sub.caughtUp = ch
	c.progressMu.Unlock()
	t := time.NewTimer(progressDrainWait)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
	}
}

// tokenKey normalizes a progress token: JSON brings numbers back as float64.
func tokenKey(tok any) string {
	switch t := tok.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	default:
		return fmt.Sprint(t)
	}
}
