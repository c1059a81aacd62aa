//go:build !linux && !darwin

package atomicfile

import "errors"

// exchange would swap the files at a and b in one step: this system
// cannot.
func exchange(a, b string) error { return errors.ErrUnsupported }

// renameNoReplace would rename a to b unless b exists: this system
// cannot.
func renameNoReplace(a, b string) error { return errors.ErrUnsupported }
