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

// saveLikeEditor makes one hand edit of the config file the way editors
// save: it reads the file, adds the key "handNN" at the top, writes a new
// file beside it and renames that over it, without the lock.
func saveLikeEditor(path string, n int) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i := strings.IndexByte(string(b), '{')
	edited := fmt.Sprintf("%s\n  \"hand%02d\": %d,%s", b[:i+1], n, n, b[i+1:])
	tmp := filepath.Join(filepath.Dir(path), ".config.json.swp")
	if err := os.WriteFile(tmp, []byte(edited), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// TestEditsKeepEditorSaves: eight CLI edits (six adds, two removes) run at
// once while a person saves the file from an editor twenty times, each
// save landing while an edit is under way, after it read the file. Every
// save and every edit is in the file: an edit redoes itself on a save it
// finds, rather than renaming a copy of what it read over it.
func TestEditsKeepEditorSaves(t *testing.T) {
	const hand = 20
	path := writeFile(t, userFile, 0o600)
	var (
		mu           sync.Mutex
		saved, inRow int
	)
	saves := make(chan chan struct{})
	var editor sync.WaitGroup
	editor.Go(func() {
		n := 0
		for done := range saves {
			if err := saveLikeEditor(path, n); err != nil {
				t.Error(err)
			}
			n++
			close(done)
		}
	})
	// At most three saves in a row land in one edit (it tries five times).
	testHookBeforeWrite = func() {
		mu.Lock()
		save := saved < hand && inRow < 3
		if save {
			saved++
			inRow++
		} else {
			inRow = 0
		}
		mu.Unlock()
		if save {
			done := make(chan struct{})
			saves <- done
			<-done
		}
	}
	defer func() { testHookBeforeWrite = nil }()
	var cli sync.WaitGroup
	for i := range 6 {
		cli.Go(func() {
			if err := AddServer(path, Server{Name: fmt.Sprintf("cli%d", i), Type: TypeLocal, Enabled: true, Command: []string{"true"}}); err != nil {
				t.Error(err)
			}
		})
	}
	for _, name := range []string{"fs", "gh"} {
		cli.Go(func() {
			if err := RemoveServer(path, name); err != nil {
				t.Error(err)
			}
		})
	}
	cli.Wait()
	close(saves)
	editor.Wait()
	mu.Lock()
	if saved != hand {
		t.Errorf("%d editor saves landed during the edits, want %d", saved, hand)
	}
	n := saved
	mu.Unlock()
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var servers []string
	for _, s := range cfg.MCP.Servers {
		servers = append(servers, s.Name)
	}
	slices.Sort(servers)
	if diff := cmp.Diff([]string{"cli0", "cli1", "cli2", "cli3", "cli4", "cli5"}, servers); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	got := readFile(t, path)
	for i := range n {
		if !strings.Contains(got, fmt.Sprintf(`"hand%02d": %d,`, i, i)) {
			t.Errorf("editor save %d was lost", i)
		}
	}
	if !strings.Contains(got, `"apiKey": "sk-ant-SECRET"`) {
		t.Errorf("other keys were lost:\n%s", got)
	}
}
