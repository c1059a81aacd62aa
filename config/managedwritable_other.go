//go:build !unix

package config

// userWritable reports false: on Windows, who may write a file is its
// access list, which this build does not read. Best effort only: the
// default list of a folder under ProgramData lets users create files in
// it, so an administrator who deploys a policy there should set the
// FreeCode folder's own list.
func userWritable(path string, dirs ...string) bool { return false }
