package atomicfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps the files at a and b in one step; errors.ErrUnsupported
// where the file system cannot.
func exchange(a, b string) error {
	return renameat2(a, b, unix.RENAME_EXCHANGE)
}

// renameNoReplace renames a to b unless b exists (fs.ErrExist then);
// errors.ErrUnsupported where the file system cannot.
func renameNoReplace(a, b string) error {
	return renameat2(a, b, unix.RENAME_NOREPLACE)
}

func renameat2(a, b string, flags uint) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, flags)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return errors.ErrUnsupported
	}
	return err
}
