package proc

import (
	"io/fs"
	"log/slog"
	"os"
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
// paths its sandboxes bind and did not make too (RecordBound), and a dead
// process's placeholder that a live process's record names is left.

// placeholderRecord is a placeholder as its run record keeps it.
type placeholderRecord struct {
	Path    string `json:"path"`
	Dir     bool   `json:"dir,omitempty"`
	ModTime int64  `json:"modTime"` // as made, in nanoseconds since the epoch
}

// RecordPlaceholder records, in this process's run record, the empty file
// or directory a sandbox made at path, fi as made (see above). It does
// nothing before ReapOrphans, or where nothing is recorded.
func RecordPlaceholder(path string, fi fs.FileInfo) {
	updateRecord(func(r *runRecord) bool {
		r.Placeholders = append(r.Placeholders, placeholderRecord{Path: path, Dir: fi.IsDir(), ModTime: fi.ModTime().UnixNano()})
		return true
	})
}

// ForgetPlaceholder drops path from this process's run record: the
// sandbox removed it, or left it to whoever wrote into it.
func ForgetPlaceholder(path string) {
	updateRecord(func(r *runRecord) bool {
		n := len(r.Placeholders)
		r.Placeholders = slices.DeleteFunc(r.Placeholders, func(p placeholderRecord) bool { return p.Path == path })
		return len(r.Placeholders) != n
	})
}

// RecordBound records, in this process's run record, protected paths a
// sandbox binds that it did not make (see above), until ForgetBound. A
// path bound by several sandboxes is recorded once for each.
func RecordBound(paths ...string) {
	updateRecord(func(r *runRecord) bool {
		r.Bound = append(r.Bound, paths...)
		return len(paths) > 0
	})
}

// ForgetBound drops one record of each of paths, which a sandbox no
// longer binds.
func ForgetBound(paths ...string) {
	updateRecord(func(r *runRecord) bool {
		n := len(r.Bound)
		for _, p := range paths {
			if i := slices.Index(r.Bound, p); i >= 0 {
				r.Bound = slices.Delete(r.Bound, i, i+1)
			}
		}
		return len(r.Bound) != n
	})
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
