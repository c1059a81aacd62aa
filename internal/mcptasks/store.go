package mcptasks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/atomicfile"
	"github.com/freecode/freecode/internal/mcpwire"
)

// record is what is kept of a task in Options.Dir, one JSON file a task
// named by its id.
type record struct {
	ID        string          `json:"id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Answers are the inputResponses of the call that became the task
	// (a gated tool's).
	Answers       json.RawMessage            `json:"answers,omitempty"`
	Status        mcpwire.TaskStatus         `json:"status"`
	StatusMessage string                     `json:"statusMessage,omitempty"`
	CreatedAt     time.Time                  `json:"createdAt"`
	LastUpdatedAt time.Time                  `json:"lastUpdatedAt"`
	Result        *mcpsdk.CallToolResult     `json:"result,omitempty"`
	Error         *jsonrpc.Error             `json:"error,omitempty"`
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	// NextKey numbers the questions, so that no key is used twice in a
	// task's life, across restarts too.
	NextKey int `json:"nextKey"`
	// Runs counts the processes that ran the task's handler.
	Runs int `json:"runs"`
}

func (e *Engine) saveLocked(t *task) error {
	if e.opts.Dir == "" {
		return nil
	}
	b, err := json.Marshal(&t.rec)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(e.opts.Dir, 0o700); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(e.opts.Dir, t.rec.ID+".json"), b, 0o600)
}

func (e *Engine) removeLocked(id string) {
	if e.opts.Dir != "" {
		os.Remove(filepath.Join(e.opts.Dir, id+".json"))
	}
}

// loadRecords reads the tasks kept in dir (none if it does not exist). A
// file that does not hold a task is an error: the server would otherwise
// answer -32602 for a task it was given.
func loadRecords(dir string) ([]record, error) {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var recs []record
	for _, ent := range ents {
		name := ent.Name()
		if !ent.Type().IsRegular() || !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		var r record
		if err := json.Unmarshal(b, &r); err != nil || r.ID+".json" != name || r.Status == "" {
			return nil, fmt.Errorf("task file %s: not a task this server kept (%v)", filepath.Join(dir, name), err)
		}
		recs = append(recs, r)
	}
	return recs, nil
}
