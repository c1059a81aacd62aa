package mcp

import (
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// npx (and npm exec) installs a package into <npm cache>/_npx/<hash>, the
// hash being the first 16 hex digits of the SHA-512 of the package specs,
// sorted and joined by newlines (npm's libnpmexec). An npx killed in the
// middle of writing node_modules leaves a tree that npm takes as
// installed: every later start fails, with ERR_MODULE_NOT_FOUND for a
// dependency not yet written, until that directory is deleted. FreeCode
// sees that failure in the stderr of a server that exited during its
// connect, moves the directory aside and removes it, and starts the
// server once more, which npx installs afresh; where it cannot tell that
// the directory is this server's, the error says which one to delete.

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

// npxHash is the name of the directory npx installs packages into, as
// libnpmexec derives it. A spec that names a directory counts as its
// absolute path (cwd is the server's working directory); the others as
// written. Only a single spec is hashed: npm sorts several with the
// locale's collation, which this does not copy.
func npxHash(packages []string, cwd string) (string, bool) {
	if len(packages) != 1 {
		return "", false
	}
	spec := packages[0]
	if dir, ok := specDir(spec, cwd); ok {
		spec = dir
	}
	sum := sha512.Sum512([]byte(spec))
	return hex.EncodeToString(sum[:])[:16], true
}

// specDir returns the absolute directory a package spec names, if it is a
// path to a directory (npm-package-arg's "directory" type).
func specDir(spec, cwd string) (string, bool) {
	p, isFile := strings.CutPrefix(spec, "file:")
	if !isFile && !(strings.HasPrefix(p, ".") || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~/") ||
		strings.HasPrefix(p, `\`) || len(p) > 1 && p[1] == ':') {
		return "", false
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", false
		}
		p = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		return "", false
	}
	return filepath.Clean(p), true
}

// npmCacheDir is the npm cache a server with environment env uses: --cache,
// else npm_config_cache (npm reads its variables in any case), else npm's
// default for the platform.
func npmCacheDir(e *npmExec, env []string) string {
	if e.cache != "" {
		return e.cache
	}
	vars := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[strings.ToLower(k)] = v
		}
	}
	if c := vars["npm_config_cache"]; c != "" {
		return c
	}
	if runtime.GOOS == "windows" {
		if d := vars["localappdata"]; d != "" {
			return filepath.Join(d, "npm-cache")
		}
	}
	if h := vars["home"]; h != "" {
		return filepath.Join(h, ".npm")
	}
	return ""
}

// missingModule matches what node says when an import finds nothing: the
// code of ESM and the text of CommonJS resolution.
var missingModule = regexp.MustCompile(`ERR_MODULE_NOT_FOUND|Cannot find (?:module|package) '[^']*'`)

// npxDirInText matches an npx install directory in an error's text.
var npxDirInText = regexp.MustCompile(`((?:[A-Za-z]:)?[^\s'"():]*[/\\]_npx[/\\]([0-9a-f]{16}))[/\\]`)

// brokenNPX is an npx install directory found half written.
type brokenNPX struct {
	dir    string // the install directory, "" when not known
	why    string // node's line about the missing module
	mine   bool   // dir is this server's: its name is the hash of the server's package
	pkg    string // the package, for messages
	locked bool   // another npx holds the directory's lock now
}

// findBrokenNPX looks in the stderr lines of a server run by npx that
// exited during its connect for node's missing-module error, and returns
// the install directory it points to, or nil if there is no such error.
func findBrokenNPX(e *npmExec, env []string, cwd string, lines []string) *brokenNPX {
	why := ""
	for _, l := range lines {
		if missingModule.MatchString(l) {
			why = strings.TrimSpace(l)
			if strings.Contains(l, "Cannot find") {
				break // the line that names the module, and where from
			}
		}
	}
	if why == "" {
		return nil
	}
	b := &brokenNPX{why: why}
	hash, hashed := npxHash(e.packages, cwd)
	if len(e.packages) > 0 {
		b.pkg = strings.Join(e.packages, ", ")
	}
	// The directory node names is the one npx used, wherever its cache is
	// (an .npmrc may move it); it is taken for this server's only if its
	// name is the hash of the server's package.
	for _, l := range lines {
		if m := npxDirInText.FindStringSubmatch(l); m != nil {
			b.dir = m[1]
			b.mine = hashed && m[2] == hash
			break
		}
	}
	if b.dir == "" && hashed {
		if cache := npmCacheDir(e, env); cache != "" {
			b.dir, b.mine = filepath.Join(cache, "_npx", hash), true
		}
	}
	if b.dir != "" {
		// npm touches the lock of a directory it installs into every
		// second, and takes one untouched for a minute as stale.
		if fi, err := os.Stat(filepath.Join(b.dir, "concurrency.lock")); err == nil {
			b.locked = time.Since(fi.ModTime()) < 5*time.Second
		}
	}
	return b
}

// advice is what the user is told to do about b.
func (b *brokenNPX) advice() string {
	what := "npx's cache of the server's package"
	if b.pkg != "" {
		what = "npx's cache of " + b.pkg
	}
	if b.dir == "" {
		return fmt.Sprintf("%s looks half written (%s): delete its directory under _npx in the npm cache (npm config get cache) and start the server again", what, b.why)
	}
	if b.locked {
		return fmt.Sprintf("%s in %s looks half written (%s), and another npx is installing into it now: start the server again once that is done", what, b.dir, b.why)
	}
	return fmt.Sprintf("%s looks half written (%s): delete %s and start the server again", what, b.why, b.dir)
}

// repair moves b's directory aside and removes it, so that npx installs
// the package afresh. It refuses a directory that is not this server's,
// that another npx is installing into, or that is not a plain directory of
// this user's.
func (b *brokenNPX) repair() error {
	switch {
	case b.dir == "":
		return errors.New("no install directory known")
	case !b.mine:
		return fmt.Errorf("%s is not named for this server's package", b.dir)
	case b.locked:
		return fmt.Errorf("another npx is installing into %s", b.dir)
	case filepath.Base(filepath.Dir(b.dir)) != "_npx":
		return fmt.Errorf("%s is not in an npx cache", b.dir)
	}
	fi, err := os.Lstat(b.dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() || !ownedByMe(fi) {
		return fmt.Errorf("%s is not a directory of this user's", b.dir)
	}
	aside := b.dir + ".broken-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := os.Rename(b.dir, aside); err != nil {
		return err
	}
	if err := os.RemoveAll(aside); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("moved aside to %s, but removing it: %w", aside, err)
	}
	return nil
}
