package atomicfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps the files at a and b in one step; errors.ErrUnsupported
// where the file system cannot.
func exchange(a, b string) error {
	return renamex(a, b, unix.RENAME_SWAP)
}

// renameNoReplace renames a to b unless b exists (fs.ErrExist then);
// errors.ErrUnsupported where the file system cannot.
func renameNoReplace(a, b string) error {
	return renamex(a, b, unix.RENAME_EXCL)
}

func renamex(a, b string, flags uint32) error {
	err := unix.RenamexNp(a, b, flags)
	if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return errors.ErrUnsupported
	}
	return err
}
