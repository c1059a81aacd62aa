package mcp

import "strings"

// npmExec is what an npx or npm exec command line says about its packages.
type npmExec struct {
	// packages are the specs npx installs, as npm hashes them; nil when
	// the command line does not say (a --call without --package).
	packages []string
	cache    string // --cache, if given
}

// npxValueFlags are the npx and npm exec options that take a value in the
// next argument; any other option is taken as a switch.
var npxValueFlags = map[string]bool{
	"-p": true, "--package": true, "-c": true, "--call": true, "--cache": true,
	"--registry": true, "--userconfig": true, "--prefix": true, "--loglevel": true,
	"-w": true, "--workspace": true, "--node-options": true, "--script-shell": true,
}

// parseNPMExec reads the arguments of npx or npm exec: the options, then
// the command, which is the package to install unless --package names the
// packages.
func parseNPMExec(args []string) *npmExec {
	e := &npmExec{}
	var packages []string
	call := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(a, "=")
		switch {
		case a == "--":
			if i+1 < len(args) && len(packages) == 0 && !call {
				packages = []string{args[i+1]}
			}
			e.packages = packages
			return e
		case !strings.HasPrefix(a, "-") || a == "-":
			if len(packages) == 0 && !call {
				packages = []string{a}
			}
			e.packages = packages
			return e
		case npxValueFlags[name]:
			if !hasValue {
				if i+1 >= len(args) {
					return e
				}
				i++
				value = args[i]
			}
			switch name {
			case "-p", "--package":
				packages = append(packages, value)
			case "-c", "--call":
				call = true
			case "--cache":
				e.cache = value
			}
		}
	}
	e.packages = packages
	return e
}
