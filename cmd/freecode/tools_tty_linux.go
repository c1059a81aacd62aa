package main

import "golang.org/x/sys/unix"

// ttyFd reports whether fd is a terminal: /dev/null is a character device
// too, so only a successful terminal ioctl counts.
func ttyFd(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
	return err == nil
}
