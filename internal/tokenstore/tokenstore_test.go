package tokenstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	gokeyring "github.com/zalando/go-keyring"
	"go.uber.org/goleak"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFileRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "auth")
	s := Open(dir, nil)
	if _, err := s.Get(ctx, "a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get on an empty store: err = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatalf("Delete on an empty store: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Delete on an empty store created %s", dir)
	}
	where, err := s.Put(ctx, "a", json.RawMessage(`{"token":"one"}`))
	if err != nil || where != InFile {
		t.Fatalf("Put = %q, %v; want %q, nil", where, err, InFile)
	}
	if where, err := s.Where(ctx, "a"); where != InFile || err != nil {
		t.Errorf("Where = %q, %v; want %q", where, err, InFile)
	}
	if _, err := s.Where(ctx, "nothing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Where of a missing key: %v, want ErrNotFound", err)
	}
	if _, err := s.Put(ctx, "b", json.RawMessage(`{"token":"two"}`)); err != nil {
		t.Fatal(err)
	}
	// Another Store of the same directory (another process) sees both.
	other := Open(dir, nil)
	for key, want := range map[string]string{"a": `{"token":"one"}`, "b": `{"token":"two"}`} {
		got, err := other.Get(ctx, key)
		if err != nil {
			t.Fatalf("Get(%q): %v", key, err)
		}
		if string(got) != want {
			t.Errorf("Get(%q) = %s, want %s", key, got, want)
		}
	}
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Get(ctx, "a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete: err = %v, want ErrNotFound", err)
	}
	if _, err := s.Put(ctx, "bad", json.RawMessage(`{"token"`)); err == nil {
		t.Errorf("Put of a value that is not JSON: no error")
	}
}

func TestFileModes(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "auth")
	// A directory someone else made readable is restricted on write.
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := Open(dir, nil)
	if _, err := s.Put(ctx, "k", json.RawMessage(`{"access":"secret-value"}`)); err != nil {
		t.Fatal(err)
	}
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	got := []string{di.Mode().Perm().String(), fi.Mode().Perm().String()}
	if diff := cmp.Diff([]string{"-rwx------", "-rw-------"}, got); diff != "" {
		t.Errorf("modes of directory and file (-want +got):\n%s", diff)
	}
	// Only tokens.json is left: no temporary file.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{FileName}, names); diff != "" {
		t.Errorf("files in the store's directory (-want +got):\n%s", diff)
	}
}

func TestConcurrentPuts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			// A Store each, as separate processes would have.
			if _, err := Open(dir, nil).Put(ctx, fmt.Sprint("k", i), json.RawMessage(fmt.Sprint(i))); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	s := Open(dir, nil)
	for i := range 16 {
		got, err := s.Get(ctx, fmt.Sprint("k", i))
		if err != nil || string(got) != fmt.Sprint(i) {
			t.Errorf("Get(k%d) = %s, %v; every concurrent Put must survive", i, got, err)
		}
	}
}

func TestUnknownVersionIsNotOverwritten(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	future := `{"version": 2, "entries": {}}`
	if err := os.WriteFile(path, []byte(future), 0o600); err != nil {
		t.Fatal(err)
	}
	s := Open(dir, nil)
	if _, err := s.Put(ctx, "k", json.RawMessage(`{}`)); err == nil {
		t.Errorf("Put over a version 2 file: no error")
	}
	data, _ := os.ReadFile(path)
	if string(data) != future {
		t.Errorf("the version 2 file was rewritten: %s", data)
	}
}

// The keychain tests use go-keyring's own in-memory provider, which stands
// in for the OS keychain process-wide; they do not run in parallel.

func TestKeyringHoldsEntriesAndTheFileNone(t *testing.T) {
	gokeyring.MockInit()
	t.Cleanup(func() { gokeyring.MockInitWithError(errors.New("no keychain in this test")) })
	ctx := context.Background()
	dir := t.TempDir()
	s := Open(dir, &Options{Keyring: true})
	// An entry the file held before the keychain was used moves over.
	if _, err := Open(dir, nil).Put(ctx, "k", json.RawMessage(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	where, err := s.Put(ctx, "k", json.RawMessage(`{"v":2}`))
	if err != nil || where != InKeyring {
		t.Fatalf("Put = %q, %v; want %q, nil", where, err, InKeyring)
	}
	if where, err := s.Where(ctx, "k"); where != InKeyring || err != nil {
		t.Errorf("Where = %q, %v; want %q", where, err, InKeyring)
	}
	if got, err := s.Get(ctx, "k"); err != nil || string(got) != `{"v":2}` {
		t.Errorf("Get = %s, %v; want the keychain's entry", got, err)
	}
	if _, err := Open(dir, nil).Get(ctx, "k"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the file still holds the entry the keychain now has: err = %v", err)
	}
	// Stores of other directories do not see it.
	if _, err := Open(t.TempDir(), &Options{Keyring: true}).Get(ctx, "k"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a store of another directory sees the entry: err = %v", err)
	}
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "k"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete: err = %v, want ErrNotFound", err)
	}
}

func TestKeyringFallsBackToTheFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"no secret service", errors.New("The name org.freedesktop.secrets was not provided by any .service files")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gokeyring.MockInitWithError(tc.err)
			ctx := context.Background()
			dir := t.TempDir()
			s := Open(dir, &Options{Keyring: true})
			where, err := s.Put(ctx, "k", json.RawMessage(`{"v":1}`))
			if err != nil || where != InFile {
				t.Fatalf("Put = %q, %v; want %q, nil", where, err, InFile)
			}
			if got, err := s.Get(ctx, "k"); err != nil || string(got) != `{"v":1}` {
				t.Errorf("Get = %s, %v; want the file's entry", got, err)
			}
			if err := s.Delete(ctx, "k"); err != nil {
				t.Errorf("Delete: %v", err)
			}
		})
	}
}
