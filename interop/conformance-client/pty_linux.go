package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openPTY returns a new pseudo-terminal: the side the driver types into,
// and the terminal the command reads, its echo off (what is typed is not
// the command's output).
func openPTY() (typist, term *os.File, _ error) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	typist = os.NewFile(uintptr(fd), "/dev/ptmx")
	fail := func(err error) (*os.File, *os.File, error) {
		typist.Close()
		return nil, nil, err
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		return fail(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		return fail(err)
	}
	term, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return fail(err)
	}
	tio, err := unix.IoctlGetTermios(int(term.Fd()), unix.TCGETS)
	if err == nil {
		tio.Lflag &^= unix.ECHO
		err = unix.IoctlSetTermios(int(term.Fd()), unix.TCSETS, tio)
	}
	if err != nil {
		term.Close()
		return fail(err)
	}
	return typist, term, nil
}
