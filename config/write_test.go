package config

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/freecode/freecode/internal/filelock"
	"github.com/google/go-cmp/cmp"
)

// editChildEnv makes TestEditChild, in a child process of
// TestEditsAcrossProcesses, add the server named by it to the config file
// at $FREECODE_CONFIG and approve a key of the same name.
const editChildEnv = "FREECODE_CONFIG_EDIT_CHILD"

func TestEditChild(t *testing.T) {
	name := os.Getenv(editChildEnv)
	if name == "" {
		t.Skip("the child process of TestEditsAcrossProcesses")
	}
	path := os.Getenv("FREECODE_CONFIG")
	if err := AddServer(path, Server{Name: name, Type: TypeLocal, Enabled: true, Command: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	if err := Approve(path, name); err != nil {
		t.Fatal(err)
	}
}

// Fifty processes edit one config file at once, each adding its own server
// and approval: every edit that succeeded is in the file.
func TestEditsAcrossProcesses(t *testing.T) {
	const procs = 50
	path := writeFile(t, userFile, 0o600)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	before, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg          sync.WaitGroup
		want        []string
		wantServers []string
		errs        = make([]error, procs)
	)
	for _, s := range before.MCP.Servers {
		wantServers = append(wantServers, s.Name)
	}
	for i := range procs {
		name := fmt.Sprintf("p%02d", i)
		want = append(want, name)
		wantServers = append(wantServers, name)
		wg.Go(func() {
			cmd := exec.Command(exe, "-test.run=^TestEditChild$")
			cmd.Env = append(os.Environ(), editChildEnv+"="+name, "FREECODE_CONFIG="+path)
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("%s: %v\n%s", name, err, out)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var servers []string
	for _, s := range cfg.MCP.Servers {
		servers = append(servers, s.Name)
	}
	slices.Sort(servers)
	slices.Sort(wantServers)
	approvals := slices.Sorted(slices.Values(cfg.Approvals))
	if d := cmp.Diff(wantServers, servers); d != "" {
		t.Errorf("servers (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, approvals); d != "" {
		t.Errorf("approvals (-want +got):\n%s", d)
	}
	if got := readFile(t, path); !strings.Contains(got, `"apiKey": "sk-ant-SECRET"`) {
		t.Errorf("other keys were lost:\n%s", got)
	}
}

// An edit whose lock another writer holds for good gives up, writes
// nothing and says which lock it waited for.
func TestUpdateFileLockHeld(t *testing.T) {
	path := writeFile(t, userFile, 0o600)
	held, err := filelock.Acquire(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	saved := lockWait
	lockWait = 1 // the lock is never released: any wait ends the same way
	defer func() { lockWait = saved }()
	err = Approve(path, "k")
	if err == nil || !strings.Contains(err.Error(), filelock.Path(path)) || !strings.Contains(err.Error(), "nothing was written") {
		t.Errorf("Approve while the lock is held: %v; want an error naming %s", err, filelock.Path(path))
	}
	if got := readFile(t, path); got != userFile {
		t.Errorf("the file changed:\n%s", got)
	}
}

// A file reached through a symbolic link is locked where it lives, so
// editors that name it by either path exclude each other.
func TestUpdateFileLocksLinkTarget(t *testing.T) {
	path := writeFile(t, userFile, 0o600)
	link := filepath.Join(t.TempDir(), "config.json")
	if err := os.Symlink(path, link); err != nil {
		t.Skip(err)
	}
	held, err := filelock.Acquire(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	saved := lockWait
	lockWait = 1
	defer func() { lockWait = saved }()
	if err := Approve(link, "k"); err == nil {
		t.Error("an edit through a link ignored the lock on the file it points to")
	}
}
