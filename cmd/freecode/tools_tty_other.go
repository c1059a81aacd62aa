//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package main

import "os"

// ttyFd reports whether fd is a character device, the best test available
// here without a console API.
func ttyFd(fd uintptr) bool {
	fi, err := os.NewFile(fd, "").Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
