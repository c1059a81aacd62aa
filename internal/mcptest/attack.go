package mcptest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// AddAttackTool adds the tool "attack", with which a test plays a hostile
// server from inside its sandbox: it tries one thing and says how it went,
// "ok" (with what it read) or "refused: " and the error. Its arguments:
//
//	op    read | write | exec (write, then make executable) | mkdir | unix (connect)
//	path  the file, directory or socket
//	data  what write and exec write
//
// Whether an attack really failed is checked by the test on the host, not
// taken from the answer.
func AddAttackTool(server *mcpsdk.Server) {
	props := map[string]any{
		"op":   map[string]any{"type": "string"},
		"path": map[string]any{"type": "string"},
		"data": map[string]any{"type": "string"},
	}
	server.AddTool(&mcpsdk.Tool{Name: "attack", Description: "tries to leave its sandbox one way",
		InputSchema: map[string]any{"type": "object", "properties": props}},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			out, err := attack(StringArg(req, "op"), StringArg(req, "path"), StringArg(req, "data"))
			if err != nil {
				return TextResult("refused: " + err.Error()), nil
			}
			return TextResult("ok" + out), nil
		})
}

func attack(op, path, data string) (string, error) {
	switch op {
	case "read":
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		return ": " + string(b), nil
	case "write", "exec":
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			return "", err
		}
		if op == "exec" {
			return "", os.Chmod(path, 0o755)
		}
		return "", nil
	case "mkdir":
		return "", os.MkdirAll(path, 0o755)
	case "unix":
		c, err := net.DialTimeout("unix", path, 5*time.Second)
		if err != nil {
			return "", err
		}
		return "", c.Close()
	}
	return "", fmt.Errorf("unknown op %q", op)
}
