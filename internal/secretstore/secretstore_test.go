package secretstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	gokeyring "github.com/zalando/go-keyring"
	"go.uber.org/goleak"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"GITHUB_TOKEN", true},
		{"perplexity-key", true},
		{"team.api-key_2", true},
		{strings.Repeat("a", MaxNameLen), true},
		{"", false},
		{strings.Repeat("a", MaxNameLen+1), false},
		{"two words", false},
		{"a/b", false},
		{"a}b", false},
		{"naïve", false},
		{"x\x1b[2J", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := ValidName(tc.name); (err == nil) != tc.ok {
				t.Errorf("ValidName(%q) = %v, want ok %v", tc.name, err, tc.ok)
			}
		})
	}
}

func TestFileRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "auth")
	s := open(dir, false)
	if _, err := s.Get(ctx, "A"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get on an empty store: %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "A"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Delete on an empty store: %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Delete on an empty store created %s", dir)
	}
	if names, err := s.Names(ctx); err != nil || len(names) != 0 {
		t.Errorf("Names of an empty store = %q, %v", names, err)
	}

	const value = "sk-very-secret-1"
	where, err := s.Set(ctx, "B_KEY", value)
	if err != nil || where != s.Path() {
		t.Fatalf("Set = %q, %v; want %q", where, err, s.Path())
	}
	if _, err := s.Set(ctx, "a.key", "two words\tand a tab"); err != nil {
		t.Fatal(err)
	}
	// Another Store of the directory (another process) sees both.
	other := open(dir, false)
	for name, want := range map[string]string{"B_KEY": value, "a.key": "two words\tand a tab"} {
		if got, err := other.Get(ctx, name); err != nil || got != want {
			t.Errorf("Get(%s) = %q, %v; want %q", name, got, err, want)
		}
		if w, err := other.Where(ctx, name); err != nil || w != s.Path() {
			t.Errorf("Where(%s) = %q, %v", name, w, err)
		}
	}
	names, err := other.Names(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"B_KEY", "a.key"}, names); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	// Setting again replaces, and lists the name once.
	if _, err := s.Set(ctx, "B_KEY", value+"-2"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, "B_KEY"); got != value+"-2" {
		t.Errorf("Get after a second Set = %q", got)
	}
	if names, _ := s.Names(ctx); len(names) != 2 {
		t.Errorf("Names after a second Set = %q", names)
	}

	if err := s.Delete(ctx, "B_KEY"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Get(ctx, "B_KEY"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete: %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "B_KEY"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Delete: %v, want ErrNotFound", err)
	}
	if names, _ := s.Names(ctx); !cmp.Equal(names, []string{"a.key"}) {
		t.Errorf("Names after Delete = %q", names)
	}
	data, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), value) {
		t.Errorf("the file still holds the deleted value:\n%s", data)
	}
}

func TestRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(dir, false)
	for _, tc := range []struct{ name, value, want string }{
		{"EMPTY", "", "empty"},
		{"bad name", "v", "A-Z a-z 0-9"},
		{"", "v", "empty"},
		{"BINARY", "\xff\xfe", "not UTF-8"},
	} {
		if _, err := s.Set(ctx, tc.name, tc.value); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Set(%q, %q) = %v, want an error saying %q", tc.name, tc.value, err, tc.want)
		}
	}
	if _, err := s.Get(ctx, "bad name"); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("Get of an invalid name: %v, want a name error", err)
	}
	if names, _ := s.Names(ctx); len(names) != 0 {
		t.Errorf("refused Sets listed %q", names)
	}
}

// The file holds the values 0600 in a 0700 directory, and the index holds
// names only.
func TestFileModesAndIndex(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "auth")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := open(dir, false)
	if _, err := s.Set(ctx, "K", "value-in-the-file"); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{dir: "-rwx------", s.Path(): "-rw-------"} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm().String(); got != want {
			t.Errorf("mode of %s = %s, want %s", path, got, want)
		}
	}
	raw, err := s.file.Get(ctx, indexKey)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != `["K"]` {
		t.Errorf("the index is %s, want [\"K\"]", raw)
	}
}

// Concurrent Sets and Deletes, a Store each as separate processes would
// have, lose no name from the index and leave no name without its value.
func TestConcurrent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for i := range 8 {
		if _, err := open(dir, false).Set(ctx, fmt.Sprint("old", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if _, err := open(dir, false).Set(ctx, fmt.Sprint("new", i), fmt.Sprint("v", i)); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if err := open(dir, false).Delete(ctx, fmt.Sprint("old", i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	s := open(dir, false)
	names, err := s.Names(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 8 {
		want = append(want, fmt.Sprint("new", i))
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	for i := range 8 {
		if v, err := s.Get(ctx, fmt.Sprint("new", i)); err != nil || v != fmt.Sprint("v", i) {
			t.Errorf("Get(new%d) = %q, %v", i, v, err)
		}
	}
}

// The keychain tests use go-keyring's in-memory provider, which stands in
// for the OS keychain process-wide (no test machine's Secret Service is
// asked); they do not run in parallel.

func TestKeyringHoldsTheValues(t *testing.T) {
	gokeyring.MockInit()
	t.Cleanup(func() { gokeyring.MockInitWithError(errors.New("no keychain in this test")) })
	ctx := context.Background()
	dir := t.TempDir()
	s := open(dir, true)
	const value = "kept-in-the-keychain"
	where, err := s.Set(ctx, "TOKEN", value)
	if err != nil || where != InKeyring {
		t.Fatalf("Set = %q, %v; want %q", where, err, InKeyring)
	}
	if w, err := s.Where(ctx, "TOKEN"); w != InKeyring || err != nil {
		t.Errorf("Where = %q, %v; want %q", w, err, InKeyring)
	}
	if got, err := open(dir, true).Get(ctx, "TOKEN"); got != value || err != nil {
		t.Errorf("Get = %q, %v", got, err)
	}
	item, err := gokeyring.Get(KeyringService, dir+"\x00secret/TOKEN")
	if err != nil || item != `"`+value+`"` {
		t.Errorf("the keychain's item = %q, %v", item, err)
	}
	// The file has the index, and no value.
	data, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), value) || !strings.Contains(string(data), "TOKEN") {
		t.Errorf("the file, which should list the name only:\n%s", data)
	}
	if names, err := s.Names(ctx); err != nil || !cmp.Equal(names, []string{"TOKEN"}) {
		t.Errorf("Names = %q, %v", names, err)
	}
	if err := s.Delete(ctx, "TOKEN"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "TOKEN"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete: %v, want ErrNotFound", err)
	}
	if _, err := gokeyring.Get(KeyringService, dir+"\x00secret/TOKEN"); !errors.Is(err, gokeyring.ErrNotFound) {
		t.Errorf("the keychain still holds the item: %v", err)
	}
	if names, _ := s.Names(ctx); len(names) != 0 {
		t.Errorf("Names after Delete = %q", names)
	}
}

func TestKeyringDownFallsBackToTheFile(t *testing.T) {
	gokeyring.MockInitWithError(errors.New("The name org.freedesktop.secrets was not provided by any .service files"))
	ctx := context.Background()
	s := open(t.TempDir(), true)
	where, err := s.Set(ctx, "TOKEN", "in-the-file")
	if err != nil || where != s.Path() {
		t.Fatalf("Set = %q, %v; want %q", where, err, s.Path())
	}
	if got, err := s.Get(ctx, "TOKEN"); got != "in-the-file" || err != nil {
		t.Errorf("Get = %q, %v", got, err)
	}
	if err := s.Delete(ctx, "TOKEN"); err != nil {
		t.Errorf("Delete: %v", err)
	}
}

func TestOpenHonoursTheTokenStoreSetting(t *testing.T) {
	// With a keychain that answers, the setting alone keeps the value in
	// the file.
	t.Setenv("FREECODE_TOKEN_STORE", "file")
	gokeyring.MockInit()
	t.Cleanup(func() { gokeyring.MockInitWithError(errors.New("no keychain in this test")) })
	s := Open(t.TempDir())
	if where, err := s.Set(context.Background(), "K", "v"); err != nil || where != s.Path() {
		t.Errorf("with FREECODE_TOKEN_STORE=file, Set = %q, %v; want the file", where, err)
	}
}
