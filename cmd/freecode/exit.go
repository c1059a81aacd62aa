package main

import "errors"

// exitCoder is an error that has already been reported to the user and only
// sets the process's exit code (e.g. `mcp start` printing "✗ Server … failed").
type exitCoder interface {
	error
	ExitCode() int
}

type exitError int

func (e exitError) Error() string { return "exit status" }
func (e exitError) ExitCode() int { return int(e) }

func asExitCoder(err error, target *exitCoder) bool { return errors.As(err, target) }
