//go:build unix

package config

import (
	"os"
	"slices"
	"syscall"
)

// userWritable reports whether the user FreeCode runs as could change
// the file at path or replace it through one of dirs: one of them is
// theirs (but root's, since root can change anything and a root-owned
// policy is the norm), or writable by their group or by everyone.
func userWritable(path string, dirs ...string) bool {
	uid := os.Getuid()
	groups, _ := os.Getgroups()
	groups = append(groups, os.Getgid())
	for _, p := range append([]string{path}, dirs...) {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			continue
		}
		perm := fi.Mode().Perm()
		switch {
		case uid != 0 && int(st.Uid) == uid:
			return true
		case perm&0o002 != 0:
			return true
		case perm&0o020 != 0 && slices.Contains(groups, int(st.Gid)):
			return true
		}
	}
	return false
}
