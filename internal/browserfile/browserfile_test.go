package browserfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A redirect page sends the browser to its target, escaped, under a policy
// that allows nothing else, in a 0600 file of a 0700 directory, under a
// name that tells nothing of it; Follow reads it back as a test's browser
// does.
func TestWriteRedirect(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "browser")
	const target = `https://as.example/authorize?client_id=a&state=s"t<x>&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcallback`
	path, err := WriteRedirect(dir, target)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(path)
	if !strings.HasPrefix(name, "redirect-") || !strings.HasSuffix(name, ".html") || strings.Contains(name, "as.example") {
		t.Errorf("the page is named %s", name)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, dir: 0o700 | os.ModeDir} {
		if fi, err := os.Lstat(p); err != nil || fi.Mode() != want {
			t.Errorf("%s: %v (%v), want %v", p, fi.Mode(), err, want)
		}
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; base-uri 'none'; form-action 'none'">`,
		`<meta name="referrer" content="no-referrer">`,
		`state=s&#34;t&lt;x&gt;`,
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %s:\n%s", want, page)
		}
	}
	if strings.Contains(string(page), "<script") || strings.Contains(string(page), `s"t`) {
		t.Errorf("the page has a script or the target unescaped:\n%s", page)
	}
	u, err := FileURL(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Follow(u)
	if err != nil {
		t.Fatal(err)
	}
	if got != target {
		t.Errorf("Follow gave %q, want the target %q", got, target)
	}
	if got, err := Follow("https://as.example/x"); err != nil || got != "https://as.example/x" {
		t.Errorf("Follow of an https URL: %q, %v; want it as it is", got, err)
	}

	for _, bad := range []string{"file:///etc/passwd", "javascript:alert(1)", "https:///nohost", "not a url"} {
		if _, err := WriteRedirect(dir, bad); err == nil {
			t.Errorf("WriteRedirect(%q) wrote a page", bad)
		}
	}
}

// WriteRedirect removes the redirect pages a killed process left, and
// nothing else; the directory is made the user's alone again, and one
// that is a link is refused.
func TestRedirectDir(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "redirect-OLD.html")
	other := filepath.Join(dir, "signin-x.html")
	for _, p := range []string{old, other} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		then := time.Now().Add(-2 * redirectSweep)
		if err := os.Chtimes(p, then, then); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fresh, err := WriteRedirect(dir, "https://as.example/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("an hours-old page is still there: %v", err)
	}
	for _, p := range []string{other, fresh} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v, want it kept", p, err)
		}
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("the directory is %v, want 0700", fi.Mode().Perm())
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteRedirect(link, "https://as.example/"); err == nil {
		t.Error("WriteRedirect wrote through a link")
	}
}

func TestFileURL(t *testing.T) {
	if got, err := FileURL("/home/a b/signin#1.html"); err != nil || got != "file:///home/a%20b/signin%231.html" {
		t.Errorf("FileURL: %q, %v", got, err)
	}
	if _, err := FileURL("relative.html"); err == nil {
		t.Error("FileURL took a relative path")
	}
}
