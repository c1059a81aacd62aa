//go:build !linux

package proc

// The test servers run only where the tests that start them do.

func runTestServer([]string) int { return 2 }

func runTestOwner(string) int { return 2 }
