package proc

import (
	"encoding/json"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
)

// A sandbox (mcp/sandbox) puts an empty file or directory at a protected
// path that does not exist (.mcp.json, .npmrc, .vscode, …) in a project for
// its server's life, and removes it when the server stops. A FreeCode
// process killed outright removes nothing: so the placeholders it made are
// in its run record too, and the next FreeCode process to start removes
// those still as they were made: of the same kind, not changed since
// (their modification time), and empty. What someone wrote into meanwhile
// is theirs now, and stays. Unlike processes, a placeholder outlives a
// reboot: a record of another boot has its placeholders removed as well.
//
// A placeholder of one FreeCode process may be bound by the sandbox of
// another, started while it was there: removing it would detach that bind
// and lift the protection it gives. So a process records the protected
// paths its sandboxes bind and did not make too (RecordHeld), and a dead
// process's placeholder that a live process's record names is left. So is
// a live process's own, when its sandbox lets it go while another's binds
// it (BoundElsewhere): it stays in its maker's record, for the FreeCode
// process that starts after both to remove.

// placeholderRecord is a placeholder as its run record keeps it.
type placeholderRecord struct {
	Path    string `json:"path"`
	Dir     bool   `json:"dir,omitempty"`
	ModTime int64  `json:"modTime"` // as made, in nanoseconds since the epoch
}

// A Placeholder is an empty file or directory a sandbox made at Path;
// Info is it as made.
type Placeholder struct {
	Path string
	Info fs.FileInfo
}

// RecordHeld records, in this process's run record and in one write, the
// placeholders a sandbox made and the protected paths it binds that it did
// not make (see above), until ForgetHeld. A path bound by several
// sandboxes is recorded once for each. It does nothing before
// ReapOrphans, or where nothing is recorded.
func RecordHeld(made []Placeholder, bound []string) {
	updateRecord(func(r *runRecord) bool {
		for _, p := range made {
			r.Placeholders = append(r.Placeholders, placeholderRecord{Path: p.Path, Dir: p.Info.IsDir(), ModTime: p.Info.ModTime().UnixNano()})
		}
		r.Bound = append(r.Bound, bound...)
		return len(made)+len(bound) > 0
	})
}

// ForgetHeld drops from this process's run record the placeholders a
// sandbox removed (or left to whoever wrote into them), and one record of
// each of the bound paths it no longer binds.
func ForgetHeld(placeholders, bound []string) {
	updateRecord(func(r *runRecord) bool {
		n := len(r.Placeholders) + len(r.Bound)
		r.Placeholders = slices.DeleteFunc(r.Placeholders, func(p placeholderRecord) bool { return slices.Contains(placeholders, p.Path) })
		for _, p := range bound {
			if i := slices.Index(r.Bound, p); i >= 0 {
				r.Bound = slices.Delete(r.Bound, i, i+1)
			}
		}
		return len(r.Placeholders)+len(r.Bound) != n
	})
}

// BoundElsewhere reports whether another live FreeCode process's record
// (in this one's run directory, of this boot) names path as bound by its
// sandboxes: a placeholder of this process there must stay while it does.
// False before ReapOrphans.
func BoundElsewhere(path string) bool {
	recorderMu.Lock()
	if recorder == nil {
		recorderMu.Unlock()
		return false
	}
	own, self := recorder.path, recorder.record.Owner
	recorderMu.Unlock()
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(own), "*.json"))
	boot := bootID()
	for _, f := range files {
		if f == own {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var rec runRecord
		if json.Unmarshal(b, &rec) != nil || rec.BootID != boot || rec.Owner == self || !slices.Contains(rec.Bound, path) {
			continue
		}
		if procAlive(rec.Owner) {
			return true
		}
	}
	return false
}

// removePlaceholders removes the placeholders of a dead FreeCode process's
// record that are still as it made them and that no live process holds
// (held), and says how many it removed.
func removePlaceholders(rec runRecord, held map[string]bool, logger *slog.Logger) int {
	n := 0
	for _, p := range rec.Placeholders {
		if held[p.Path] {
			continue
		}
		fi, err := os.Lstat(p.Path)
		if err != nil || fi.ModTime().UnixNano() != p.ModTime {
			continue // gone, or changed since
		}
		switch {
		case p.Dir && fi.IsDir():
			if entries, err := os.ReadDir(p.Path); err != nil || len(entries) > 0 {
				continue
			}
		case !p.Dir && fi.Mode().IsRegular():
			if fi.Size() > 0 {
				continue
			}
		default:
			continue
		}
		if err := os.Remove(p.Path); err == nil {
			n++
			logger.Info("removed a sandbox's placeholder that a killed FreeCode process left", "owner", rec.Owner.PID, "path", p.Path)
		}
	}
	return n
}
