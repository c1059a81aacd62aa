package mcp

import (
	"strings"
	"sync"
	"testing"
)

// OnLog gets a server's stderr lines and its notifications/message, each
// with its source and level, masked like the stderr tail.
func TestConnOnLog(t *testing.T) {
	const secret = "literal-Secret-1"
	srv := testSrv(t, "logger", "printenv")
	srv.Env["LIT"] = secret
	var (
		mu   sync.Mutex
		logs []Log
	)
	c := newTestConnOpts(t, srv, nil, &ConnOptions{Environ: testEnviron, OnLog: func(l Log) {
		mu.Lock()
		defer mu.Unlock()
		logs = append(logs, l)
	}})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	// One notifications/message of 200 bytes, its data a run of x.
	callText(t, c, "huge", map[string]any{"bytes": "200"})
	c.Close() // drains stderr and the session

	mu.Lock()
	defer mu.Unlock()
	var stderrLine, mcpLine *Log
	for i, l := range logs {
		if strings.Contains(l.Message, secret) {
			t.Errorf("a log line shows the secret: %+v", l)
		}
		switch {
		case l.Source == LogStderr && l.Message == "LIT=***":
			stderrLine = &logs[i]
		case l.Source == LogMCP && strings.HasPrefix(l.Message, "xxxx"):
			mcpLine = &logs[i]
		}
	}
	if stderrLine == nil || stderrLine.Server != "logger" || stderrLine.Level != "" || stderrLine.Time.IsZero() {
		t.Errorf("stderr line LIT=***: %+v", stderrLine)
	}
	if mcpLine == nil || mcpLine.Server != "logger" || mcpLine.Level != "info" {
		t.Errorf("notifications/message: %+v", mcpLine)
	}
}
