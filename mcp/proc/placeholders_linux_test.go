package proc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestPlaceholdersOfADeadProcess: the next FreeCode process removes the
// placeholders a dead one's run record names, where they are still as
// made (same kind, not changed since, empty), also from a record of
// another boot; what was written into meanwhile, what a live process
// made, and a dead process's placeholder a live process's sandbox binds,
// stay.
func TestPlaceholdersOfADeadProcess(t *testing.T) {
	run, proj := t.TempDir(), t.TempDir()
	at := func(name string) string { return filepath.Join(proj, name) }
	made := func(name string, dir bool) placeholderRecord {
		t.Helper()
		path := at(name)
		var err error
		if dir {
			err = os.Mkdir(path, 0o755)
		} else {
			err = os.WriteFile(path, nil, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		return placeholderRecord{Path: path, Dir: dir, ModTime: fi.ModTime().UnixNano()}
	}
	untouchedFile, untouchedDir := made(".mcp.json", false), made(".vscode", true)
	written, filled := made(".npmrc", false), made(".claude", true)
	touched := made(".cursor", true)
	otherBoot := made(".idea", true)
	heldByLive := made(".freecode", true)
	boundByLive := made(".git-hooks", true)
	// What someone did to them since they were made: written into (within
	// the clock's tick, so that the time alone does not tell), or changed.
	if err := os.WriteFile(written.Path, []byte("registry=https://example.test/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filled.Path, "settings.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []placeholderRecord{written, filled} {
		if err := os.Chtimes(p.Path, time.Time{}, time.Unix(0, p.ModTime)); err != nil {
			t.Fatal(err)
		}
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(touched.Path, later, later); err != nil {
		t.Fatal(err)
	}

	live, ok := procStat(os.Getppid())
	if !ok {
		t.Fatal("cannot read the parent's /proc stat")
	}
	for name, rec := range map[string]runRecord{
		// pid 1 with another start time: dead.
		"1.json": {Version: 1, BootID: bootID(), Owner: procID{PID: 1, Start: 1},
			Placeholders: []placeholderRecord{untouchedFile, untouchedDir, written, filled, touched, boundByLive}},
		"2.json": {Version: 1, BootID: "another boot", Owner: procID{PID: 2, Start: 2},
			Placeholders: []placeholderRecord{otherBoot}},
		strconv.Itoa(live.id.PID) + ".json": {Version: 1, BootID: bootID(), Owner: live.id,
			Placeholders: []placeholderRecord{heldByLive}, Bound: []string{boundByLive.Path}},
	} {
		b, _ := json.Marshal(rec)
		if err := os.WriteFile(filepath.Join(run, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	err := ReapOrphans(run, nil)
	stopRecording()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []placeholderRecord{untouchedFile, untouchedDir, otherBoot} {
		if _, err := os.Lstat(p.Path); !os.IsNotExist(err) {
			t.Errorf("%s, a dead process's placeholder as it made it, was not removed: %v", filepath.Base(p.Path), err)
		}
	}
	for _, p := range []placeholderRecord{written, filled, touched, heldByLive, boundByLive} {
		if _, err := os.Lstat(p.Path); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p.Path), err)
		}
	}
	if _, err := os.Stat(filepath.Join(filled.Path, "settings.json")); err != nil {
		t.Errorf("the file written into a placeholder directory is gone: %v", err)
	}
	left, _ := os.ReadDir(run)
	if len(left) != 1 || left[0].Name() != strconv.Itoa(live.id.PID)+".json" {
		t.Errorf("run records left: %v; want the live process's alone", left)
	}
}

// TestPlaceholderRecorded: what a sandbox holds is in this process's run
// record from RecordHeld to ForgetHeld, and a record that holds nothing
// else goes with it.
func TestPlaceholderRecorded(t *testing.T) {
	run := t.TempDir()
	if err := ReapOrphans(run, nil); err != nil {
		t.Fatal(err)
	}
	defer stopRecording()
	self, _ := selfID()
	file := filepath.Join(run, strconv.Itoa(self.PID)+".json")
	dir := t.TempDir()
	path, bound := filepath.Join(dir, ".mcp.json"), filepath.Join(dir, ".vscode")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Lstat(path)
	read := func() runRecord {
		t.Helper()
		var rec runRecord
		b, err := os.ReadFile(file)
		if err == nil {
			err = json.Unmarshal(b, &rec)
		}
		if err != nil {
			t.Fatalf("run record %s: %v", file, err)
		}
		return rec
	}
	RecordHeld([]Placeholder{{Path: path, Info: fi}}, []string{bound})
	RecordHeld(nil, []string{bound}) // a second sandbox binds it too
	rec := read()
	if len(rec.Placeholders) != 1 || rec.Placeholders[0].Path != path || rec.Placeholders[0].ModTime != fi.ModTime().UnixNano() ||
		len(rec.Bound) != 2 {
		t.Fatalf("run record: %+v; want the placeholder %s and %s bound twice", rec, path, bound)
	}
	ForgetHeld([]string{path}, []string{bound})
	if rec := read(); len(rec.Placeholders) != 0 || len(rec.Bound) != 1 {
		t.Errorf("after the first sandbox let go: %+v; want %s bound once", rec, bound)
	}
	ForgetHeld(nil, []string{bound})
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the run record of nothing is still there: %v", err)
	}
}

// TestBoundElsewhere: a path is bound elsewhere only when a live FreeCode
// process other than this one, of this boot, records it as bound.
func TestBoundElsewhere(t *testing.T) {
	run := t.TempDir()
	live, ok := procStat(os.Getppid())
	if !ok {
		t.Fatal("cannot read the parent's /proc stat")
	}
	for name, rec := range map[string]runRecord{
		"live.json":  {Version: 1, BootID: bootID(), Owner: live.id, Bound: []string{"/p/live"}},
		"dead.json":  {Version: 1, BootID: bootID(), Owner: procID{PID: 1, Start: 1}, Bound: []string{"/p/dead"}},
		"other.json": {Version: 1, BootID: "another boot", Owner: live.id, Bound: []string{"/p/other"}},
	} {
		b, _ := json.Marshal(rec)
		if err := os.WriteFile(filepath.Join(run, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if BoundElsewhere("/p/live") {
		t.Error("bound elsewhere before ReapOrphans named the run directory")
	}
	// ReapOrphans drops the dead one's and the other boot's records: write
	// them again after it, as records that come and go while this runs.
	if err := ReapOrphans(run, nil); err != nil {
		t.Fatal(err)
	}
	defer stopRecording()
	for name, rec := range map[string]runRecord{
		"dead.json":  {Version: 1, BootID: bootID(), Owner: procID{PID: 1, Start: 1}, Bound: []string{"/p/dead"}},
		"other.json": {Version: 1, BootID: "another boot", Owner: live.id, Bound: []string{"/p/other"}},
	} {
		b, _ := json.Marshal(rec)
		os.WriteFile(filepath.Join(run, name), b, 0o600)
	}
	RecordHeld(nil, []string{"/p/own"})
	for path, want := range map[string]bool{"/p/live": true, "/p/dead": false, "/p/other": false, "/p/own": false, "/p/none": false} {
		if got := BoundElsewhere(path); got != want {
			t.Errorf("BoundElsewhere(%s) = %v, want %v", path, got, want)
		}
	}
}
