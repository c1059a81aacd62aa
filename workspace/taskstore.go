package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/freecode/freecode/internal/atomicfile"
	"github.com/freecode/freecode/mcp/tasks"
)

// TasksDir is the directory, beside the config file, where a sidecar
// keeps the tasks it follows (Options.KeepTasks): one file per project
// root, mode 0600, holding what to poll (server, task id, the call) and
// nothing the server returned, so no result and no secret.
const TasksDir = "tasks"

// taskStore is the file of one workspace's live tasks. Its mu orders the
// writes; it is a leaf.
type taskStore struct {
	path string
	mu   sync.Mutex
}

// storedTask is one live task on disk.
type storedTask struct {
	Server         string       `json:"server"`
	TaskID         string       `json:"taskId"`
	Tool           string       `json:"tool"`
	CallID         string       `json:"callId"`
	Status         tasks.Status `json:"status"`
	StatusMessage  string       `json:"statusMessage,omitempty"`
	CreatedAt      time.Time    `json:"createdAt"`
	PollIntervalMs *int64       `json:"pollIntervalMs,omitempty"`
	TTLMs          *int64       `json:"ttlMs,omitempty"`
}

type storedTasks struct {
	Root  string       `json:"root"` // the project root, or "" without one: what the file is for
	Tasks []storedTask `json:"tasks"`
}

// newTaskStore returns the store of the workspace of root, in dir.
func newTaskStore(dir, root string) *taskStore {
	sum := sha256.Sum256([]byte(root))
	return &taskStore{path: filepath.Join(dir, TasksDir, hex.EncodeToString(sum[:8])+".json")}
}

// write replaces the file with the live tasks; none removes it.
func (s *taskStore) write(root string, live []storedTask) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(live) == 0 {
		if err := os.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	b, err := json.MarshalIndent(storedTasks{Root: root, Tasks: live}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(s.path, append(b, '\n'), 0o600)
}

// read returns the tasks the file holds; none when there is no file.
func (s *taskStore) read() ([]storedTask, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st storedTasks
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	return st.Tasks, nil
}

// save has the live tasks written to the store, if there is one, soon:
// the saver writes the latest state, once for any number of changes that
// came while it wrote, so that a hundred tasks ending together cost a
// write or two, not a hundred, and none waits for the disk.
func (tr *taskTracker) save() {
	if tr.store == nil {
		return
	}
	select {
	case tr.dirty <- struct{}{}:
	default: // a write is due already, and will see this change
	}
}

// saver writes the live tasks each time save asks, until dirty closes;
// it writes once more then, so that what close leaves is the last state.
func (tr *taskTracker) saver() {
	defer close(tr.saved)
	for range tr.dirty {
		tr.writeLive()
	}
	tr.writeLive()
}

// writeLive writes the live tasks to the store. A failure is logged: the
// tasks are followed all the same, only not after a restart.
func (tr *taskTracker) writeLive() {
	tr.mu.Lock()
	var live []storedTask
	for _, tk := range tr.tasks {
		if tk.info.Status.Terminal() {
			continue
		}
		live = append(live, storedTask{
			Server: tk.info.Server, TaskID: tk.info.TaskID, Tool: tk.info.Tool, CallID: tk.info.CallID,
			Status: tk.info.Status, StatusMessage: tk.info.StatusMessage, CreatedAt: tk.info.CreatedAt,
			PollIntervalMs: tk.poll, TTLMs: tk.ttl,
		})
	}
	tr.mu.Unlock()
	if err := tr.store.write(tr.root, live); err != nil {
		tr.logger.Warn("could not keep the tasks being followed; a restart will not resume them", "path", tr.store.path, "error", err)
	}
}

// resume follows again the tasks an earlier FreeCode of this workspace
// left live. A task whose server is no longer configured, or that its
// server no longer has, ends as failed saying so. They are nobody's
// (TaskInfo.Owner): the frontend that made the call is not known any
// more; their questions are declined until a frontend adopts them.
func (tr *taskTracker) resume() {
	if tr.store == nil {
		return
	}
	stored, err := tr.store.read()
	if err != nil {
		tr.logger.Warn("could not read the tasks an earlier FreeCode followed", "error", err)
		return
	}
	for _, st := range stored {
		if st.Server == "" || st.TaskID == "" || !st.Status.Valid() || st.Status.Terminal() {
			continue
		}
		tr.logger.Info("following a task again after a restart", "server", st.Server, "task", st.TaskID)
		tk := &tracked{
			info: TaskInfo{Server: st.Server, TaskID: st.TaskID, Tool: st.Tool, CallID: st.CallID,
				Status: st.Status, StatusMessage: st.StatusMessage, CreatedAt: st.CreatedAt, UpdatedAt: time.Now()},
			poll: st.PollIntervalMs, ttl: st.TTLMs,
		}
		t := &tasks.Task{TaskID: st.TaskID, Status: tasks.Working, StatusMessage: st.StatusMessage,
			CreatedAt: st.CreatedAt.Format(time.RFC3339Nano), PollIntervalMs: st.PollIntervalMs, TTLMs: st.TTLMs}
		tr.follow(tk, t)
	}
}
