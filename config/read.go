package config

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxFileBytes bounds a config or settings file. A cloned repository's
// settings are untrusted input and are read on every reload.
const MaxFileBytes = 4 << 20

// bom is the UTF-8 byte order mark, which Windows editors (Notepad,
// Visual Studio) put at the start of a file they save as UTF-8.
const bom = "\xef\xbb\xbf"

// trimBOM returns data without a leading byte order mark, and whether it
// had one.
func trimBOM(data []byte) ([]byte, bool) {
	if rest, ok := bytes.CutPrefix(data, []byte(bom)); ok {
		return rest, true
	}
	return data, false
}

// ReadFile reads a config or settings file of at most MaxFileBytes. A
// leading UTF-8 byte order mark is dropped: JSON has none, but editors on
// Windows write one; UpdateFile puts it back when it writes the file.
//
// Only a regular file is read. A cloned repository could ship its settings
// file as a link to /dev/stdin, where the sidecar's protocol comes in, or to
// a FIFO or a device (/dev/zero): reading one would steal the frontend's
// messages, block a reload forever or fill memory. The check comes before
// opening, since opening a FIFO blocks, and again on the open file.
func ReadFile(path string) ([]byte, error) {
	data, _, err := readRaw(path)
	data, _ = trimBOM(data)
	return data, err
}

// readRaw is ReadFile without dropping the byte order mark, with what
// the open file was (for atomicfile.StampOf).
func readRaw(path string) ([]byte, fs.FileInfo, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: not a regular file (%s)", path, fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: not a regular file (%s)", path, fi.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, nil, fmt.Errorf("%s: larger than %d MiB", path, MaxFileBytes>>20)
	}
	return data, fi, nil
}
