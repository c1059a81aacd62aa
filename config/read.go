package config

import (
	"fmt"
	"io"
	"os"
)

// MaxFileBytes bounds a config or settings file. A cloned repository's
// settings are untrusted input and are read on every reload.
const MaxFileBytes = 4 << 20

// ReadFile reads a config or settings file of at most MaxFileBytes.
//
// Only a regular file is read. A cloned repository could ship its settings
// file as a link to /dev/stdin, where the sidecar's protocol comes in, or to
// a FIFO or a device (/dev/zero): reading one would steal the frontend's
// messages, block a reload forever or fill memory. The check comes before
// opening, since opening a FIFO blocks, and again on the open file.
func ReadFile(path string) ([]byte, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, fi.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB", path, MaxFileBytes>>20)
	}
	return data, nil
}
