//go:build !linux

package main

import (
	"errors"
	"os"
)

// openPTY is Linux's only (the suite's Node is Linux's): elsewhere the CLI
// driver's calls run without a terminal.
func openPTY() (typist, term *os.File, _ error) {
	return nil, nil, errors.New("no pseudo-terminal here")
}
