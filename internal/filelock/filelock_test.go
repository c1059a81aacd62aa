package filelock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

// The test binary doubles as the child process of the tests below: with
// childEnv set to "count:<file>:<n>" it adds 1 to the number in <file> n
// times, each under the lock; with "hold:<file>" it takes the lock, says
// "held" on stdout and waits to be killed.
const childEnv = "FILELOCK_TEST_CHILD"

func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		if err := child(v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func child(spec string) error {
	mode, rest, _ := strings.Cut(spec, ":")
	switch mode {
	case "count":
		i := strings.LastIndexByte(rest, ':')
		file := rest[:i]
		n, err := strconv.Atoi(rest[i+1:])
		if err != nil {
			return err
		}
		for range n {
			if err := increment(file); err != nil {
				return err
			}
		}
		return nil
	case "hold":
		if _, err := Acquire(context.Background(), rest); err != nil {
			return err
		}
		fmt.Println("held")
		select {}
	}
	return fmt.Errorf("unknown child mode %q", mode)
}

// increment reads the number in file and writes it back plus one, under
// the lock. The write truncates first, so without the lock another
// process can read an empty file or a count that is about to be replaced.
func increment(file string) error {
	l, err := Acquire(context.Background(), file)
	if err != nil {
		return err
	}
	defer l.Unlock()
	b, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	n := 0
	if len(b) > 0 {
		if n, err = strconv.Atoi(string(b)); err != nil {
			return fmt.Errorf("torn count %q: %w", b, err)
		}
	}
	return os.WriteFile(file, []byte(strconv.Itoa(n+1)), 0o600)
}

func self(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// Processes that each add to a shared count under the lock lose no
// addition: the lock excludes other processes, not only goroutines.
func TestExcludesProcesses(t *testing.T) {
	const procs, each = 16, 25
	file := filepath.Join(t.TempDir(), "count")
	var wg sync.WaitGroup
	errs := make([]error, procs)
	for i := range procs {
		wg.Go(func() {
			cmd := exec.Command(self(t))
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=count:%s:%d", childEnv, file, each))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("child %d: %v\n%s", i, err, out)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), strconv.Itoa(procs*each); got != want {
		t.Errorf("count after %d processes added %d each: %s, want %s", procs, each, got, want)
	}
}

// Goroutines of one process are excluded as well.
func TestExcludesGoroutines(t *testing.T) {
	const goroutines, each = 8, 50
	file := filepath.Join(t.TempDir(), "count")
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				if err := increment(file); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got, want := readFile(t, file), strconv.Itoa(goroutines*each); got != want {
		t.Errorf("count: %s, want %s", got, want)
	}
}

// A waiter gives up when its context ends, with an error naming the lock
// file and the context's cause, and the lock stays usable afterwards.
func TestAcquireHeedsContext(t *testing.T) {
	target := filepath.Join(t.TempDir(), "config.json")
	held, err := Acquire(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("gave up after 20s")
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error)
	go func() {
		l, err := Acquire(ctx, target)
		if err == nil {
			l.Unlock()
		}
		done <- err
	}()
	cancel(cause)
	err = <-done
	if !errors.Is(err, cause) || !strings.Contains(err.Error(), Path(target)) {
		t.Errorf("Acquire while held, context cancelled: %v; want an error naming %s and wrapping %q", err, Path(target), cause)
	}
	if err := held.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := held.Unlock(); err != nil {
		t.Errorf("second Unlock: %v", err)
	}
	l, err := Acquire(context.Background(), target)
	if err != nil {
		t.Fatalf("Acquire after Unlock: %v", err)
	}
	l.Unlock()
}

// A process killed while holding the lock leaves no stale lock behind.
func TestKilledHolderReleases(t *testing.T) {
	target := filepath.Join(t.TempDir(), "config.json")
	cmd := exec.Command(self(t))
	cmd.Env = append(os.Environ(), childEnv+"=hold:"+target)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "held\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %q, %v", line, err)
	}
	// Held by the child now: a waiter with a cancelled context must fail.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if l, err := Acquire(ctx, target); err == nil {
		l.Unlock()
		t.Error("Acquire succeeded while another process held the lock")
	}
	cmd.Process.Kill()
	cmd.Wait()
	l, err := Acquire(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	l.Unlock()
}

func TestPath(t *testing.T) {
	want := filepath.Join("a", "b", ".config.json.lock")
	if lockDir {
		want = filepath.Join("a", "b")
	}
	if got := Path(filepath.Join("a", "b", "config.json")); got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
}

// TestNoLockFileLeft: where the directory is the lock, editing a project's
// file leaves nothing beside it.
func TestNoLockFileLeft(t *testing.T) {
	if !lockDir {
		t.Skip("this system locks a file beside the target")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "settings.local.json")
	l, err := Acquire(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files left in the directory: %v", entries)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
