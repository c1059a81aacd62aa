//go:build race

package racetest

import (
	"os"
	"strings"
	"syscall"
)

func init() {
	v, _ := os.LookupEnv("GORACE")
	if strings.Contains(v, "atexit_sleep_ms") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	if v != "" {
		v += " "
	}
	env := []string{"GORACE=" + v + "atexit_sleep_ms=0"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GORACE=") {
			env = append(env, kv)
		}
	}
	_ = syscall.Exec(exe, os.Args, env) // returns only on failure: run on as is
}
