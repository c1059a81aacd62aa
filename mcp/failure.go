package mcp

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/freecode/freecode/config"
)

// FailureKind says what kind of thing went wrong when a server did not
// come up, so that a frontend can offer what helps (Show Log, fix the
// PATH) and the Conn knows whether another try can help.
type FailureKind int

// The kinds of a Failure.
const (
	FailureOther FailureKind = iota
	// FailureCommandNotFound: the command is not on the PATH the server
	// gets (or not at the path given). No retry helps.
	FailureCommandNotFound
	// FailureExited: the process ended before the handshake.
	FailureExited
	// FailurePackageNotFound: a package runner's registry has no such
	// package (npm's 404). No retry helps.
	FailurePackageNotFound
	// FailureTimeout: no answer within the server's timeout.
	FailureTimeout
	// FailureConfig: the entry cannot run as written (a variable it names
	// is not set). No retry helps.
	FailureConfig
	// FailureSecret: a secret the entry names (${secret:NAME}) is not set;
	// Status.MissingSecrets says which. Setting it is what helps.
	FailureSecret
)

var failureNames = [...]string{
	FailureOther:           "other",
	FailureCommandNotFound: "commandNotFound",
	FailureExited:          "exited",
	FailurePackageNotFound: "packageNotFound",
	FailureTimeout:         "timeout",
	FailureConfig:          "config",
	FailureSecret:          "secret",
}

// String returns the kind as the sidecar protocol spells it.
func (k FailureKind) String() string {
	if k >= 0 && int(k) < len(failureNames) {
		return failureNames[k]
	}
	return "other"
}

// Failure is why a server did not come up, in the user's terms: Error is
// what happened, first ("exited with code 3: error: GITHUB_TOKEN is not
// set"), and Err, which it wraps, what FreeCode was doing meanwhile (the
// JSON-RPC call, a broken pipe), which goes to the log.
type Failure struct {
	Kind FailureKind
	Msg  string
	// ExitCode is the process's exit code, when it exited with one; -1
	// otherwise (it runs, or a signal ended it).
	ExitCode int
	// Secrets are the secrets a FailureSecret misses, by name.
	Secrets []string
	Err     error
}

func (f *Failure) Error() string { return f.Msg }
func (f *Failure) Unwrap() error { return f.Err }

// sameExit reports whether a and b are one exit before the handshake: the
// same code and the same words (its stderr's telling line). A server that
// exits so twice in a row will do it again: its cause is on its row
// already, and retrying it for half a minute only hides that.
func sameExit(a, b *Failure) bool {
	return a != nil && b != nil && a.Kind == FailureExited && b.Kind == FailureExited &&
		a.ExitCode == b.ExitCode && a.Msg == b.Msg
}

// exitedAgain is err, an exit sameExit found twice, as the Conn gives up
// on it: FreeCode tries again when the entry changes or the user starts
// the server.
func exitedAgain(err error) error {
	f := failureOf(err)
	return &Failure{Kind: FailureExited, ExitCode: f.ExitCode, Err: err,
		Msg: f.Msg + " (it exited the same way twice in a row, so it is not retried: fix what it says, then start it again; a change to its entry starts it again too)"}
}

// final reports whether no retry can help.
func (f *Failure) final() bool {
	return f.Kind == FailureCommandNotFound || f.Kind == FailurePackageNotFound || f.Kind == FailureConfig
}

// failureOf returns the Failure in err's chain, if any.
func failureOf(err error) *Failure {
	var f *Failure
	if errors.As(err, &f) {
		return f
	}
	return nil
}

// lookCommand finds argv0 as the server's process is started: on the PATH
// of env (the environment the server gets: its entry's PATH when the entry
// sets one, else the sidecar's), or, if it holds a path separator, at that
// path (relative to dir). It returns the absolute path of the file to run,
// which the process is started from (proc.Command.Path), so what is found
// is what runs; or a FailureCommandNotFound when there is nothing to run.
func lookCommand(argv0, dir string, env []string) (string, error) {
	if argv0 == "" {
		return "", &Failure{Kind: FailureCommandNotFound, Msg: "the command is empty", ExitCode: -1}
	}
	if strings.ContainsRune(argv0, '/') || strings.ContainsRune(argv0, filepath.Separator) {
		p := argv0
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", &Failure{Kind: FailureCommandNotFound, Msg: fmt.Sprintf("`%s` %s", argv0, err), ExitCode: -1, Err: err}
		}
		return filepath.Abs(p)
	}
	path := envValue(env, "PATH")
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) && dir != "" {
			d = filepath.Join(dir, d)
		}
		for _, name := range commandNames(argv0) {
			if p := filepath.Join(d, name); executable(p) == nil {
				return filepath.Abs(p)
			}
		}
	}
	return "", &Failure{Kind: FailureCommandNotFound, ExitCode: -1,
		Msg: fmt.Sprintf("`%s` is not on the PATH the server gets (%s): install it, or give its full path", argv0, pathShown(path, envValue(env, "HOME"))),
		Err: fmt.Errorf("PATH=%s", path)}
}

// pathShown is a PATH as a failure line shows it: its first directories,
// home as ~, and how many more there are. An editor's PATH runs to a dozen
// directories of its own, which would bury the one line that matters; the
// whole of it is the failure's detail (Failure.Err), in the sidecar's log.
func pathShown(path, home string) string {
	const shown = 3
	var dirs []string
	for _, d := range filepath.SplitList(path) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return "it is empty"
	}
	for i, d := range dirs {
		if home != "" && home != "/" && (d == home || strings.HasPrefix(d, home+string(filepath.Separator))) {
			dirs[i] = "~" + d[len(home):]
		}
	}
	if len(dirs) <= shown+1 {
		return strings.Join(dirs, ", ")
	}
	return fmt.Sprintf("%s and %d more directories", strings.Join(dirs[:shown], ", "), len(dirs)-shown)
}

// executable reports why the file p cannot be run, nil if it can.
func executable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return errors.New("does not exist")
	case err != nil:
		return err
	case fi.IsDir():
		return errors.New("is a directory")
	case !isExecutable(fi):
		return errors.New("is not executable")
	}
	return nil
}

// envValue is the last value of name in env (os.Environ form).
func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

// reasonLine picks from a server's stderr the line that says why it
// stopped: the last that reads like an error, skipping stack frames and
// the runners' boilerplate; else the last line; "" for none.
func reasonLine(stderr []string) string {
	last := ""
	for i := len(stderr) - 1; i >= 0; i-- {
		l := strings.TrimSpace(stderr[i])
		if l == "" || noiseLine.MatchString(stderr[i]) {
			continue
		}
		if last == "" {
			last = l
		}
		if errorLine.MatchString(l) {
			return l
		}
	}
	return last
}

var (
	// errorLine is a line that says what went wrong, in most languages'
	// words (Error:, KeyError:, panic:, "is not set", "Usage:").
	errorLine = regexp.MustCompile(`(?i)error|fatal|exception|panic|not set|not found|no such|denied|cannot|can't|failed|missing|invalid|required|usage:`)
	// noiseLine is a line that never is the reason: a stack frame, where
	// the runner's log is, which Node printed it.
	noiseLine = regexp.MustCompile(`^\s+at |^\s+File "|^\s*\^+\s*$|A complete log of this run can be found in|^Node\.js v\d|^npm (error|ERR!) 404\s*$|^npm (error|ERR!) 404 (Note that you can also install|tarball, folder)|^npm (error|ERR!) code E\d+`)
	// npm404 is npm's line naming the package its registry does not have
	// (npm 7 to 11 word it differently).
	npm404 = regexp.MustCompile(`npm (?:error|ERR!) 404 .*'(.+?)@[^@']*' (?:is not in (?:the npm|this) registry|could not be found)`)
	// npm404GET is npm's line of the GET that got a 404.
	npm404GET = regexp.MustCompile(`npm (?:error|ERR!) 404 Not Found - GET (\S+)`)
)

// packageMissing returns the package a package runner's registry said it
// does not have, from its stderr, or "".
func packageMissing(stderr []string) string {
	for _, l := range stderr {
		if m := npm404.FindStringSubmatch(l); m != nil {
			return m[1]
		}
	}
	for _, l := range stderr {
		if m := npm404GET.FindStringSubmatch(l); m != nil {
			if u, err := url.Parse(m[1]); err == nil {
				if name, err := url.PathUnescape(strings.TrimPrefix(u.EscapedPath(), "/")); err == nil && name != "" {
					return name
				}
			}
		}
	}
	return ""
}

// exitFailure tells how a server that exited before the handshake ended:
// its exit code (or signal) and the stderr line that says why; npm's 404
// as the package it could not find. err is what the connect was doing.
func exitFailure(how string, code int, stderr []string, err error) *Failure {
	if pkg := packageMissing(stderr); pkg != "" {
		return &Failure{Kind: FailurePackageNotFound, ExitCode: code, Err: err,
			Msg: fmt.Sprintf("npm has no package named %s (npm's registry answered 404)", pkg)}
	}
	msg := how
	if why := reasonLine(stderr); why != "" {
		msg += ": " + why
	} else if code == 0 {
		// A program that is not an MCP server (ls, a script that does its
		// work and ends) exits so; "exited with code 0" alone reads as
		// success.
		msg += " before the MCP handshake, saying nothing on stderr: it does not look like an MCP server, which answers initialize on its stdout and runs until its stdin closes; check the command"
	}
	return &Failure{Kind: FailureExited, Msg: msg, ExitCode: code, Err: err}
}

// timeoutFailure tells a connect that got no answer in time: what it
// waited for first, then the server's last stderr line, which often
// says why.
func timeoutFailure(msg string, stderr []string, err error) *Failure {
	if why := reasonLine(stderr); why != "" {
		msg += "; the server's last word on stderr: " + why
	}
	return &Failure{Kind: FailureTimeout, Msg: msg, ExitCode: -1, Err: err}
}

// processExit is the supervisor's word that a live session's process
// exited; explainExit tells it in the user's terms once its stderr is
// drained.
type processExit struct{ err error }

func (e *processExit) Error() string { return e.err.Error() }
func (e *processExit) Unwrap() error { return e.err }

// explainExit returns lost, why the session s ended, as an exitFailure
// when its process exited by itself.
func (c *Conn) explainExit(s *session, lost error) error {
	var pe *processExit
	if s.proc == nil || !errors.As(lost, &pe) {
		return lost
	}
	code, how, ok := s.proc.Exit()
	if !ok {
		return lost
	}
	return exitFailure(how, code, c.tail.since(s.tailFrom), lost)
}

// Retry is the next try of a server that failed to connect: which retry
// it is (Attempt: 1 for the first, the try after the one that failed), of
// how many retries in all (Max: 6), and when it starts.
type Retry struct {
	Attempt, Max int
	At           time.Time
}

// noteErrorLocked makes err the Conn's last error: its text, and what kind
// of failure it is. The caller holds mu.
func (c *Conn) noteErrorLocked(err error) {
	c.lastError = err.Error()
	c.failureText = c.lastError
	c.lastFailure = failureOf(err)
	var cerr *configError
	if c.lastFailure == nil && errors.As(err, &cerr) {
		c.lastFailure = &Failure{Kind: FailureConfig, Msg: cerr.Error(), ExitCode: -1}
		if me := (*config.MissingError)(nil); errors.As(err, &me) && len(me.Secrets) > 0 {
			c.lastFailure.Kind, c.lastFailure.Secrets = FailureSecret, me.Secrets
		}
	}
}

// failureStatusLocked fills in what st says of the last failure and the
// next try. The caller holds mu.
func (c *Conn) failureStatusLocked(st *Status) {
	if f := c.lastFailure; f != nil && c.lastError != "" && c.lastError == c.failureText {
		st.LastErrorKind = f.Kind
		st.MissingSecrets = slices.Clone(f.Secrets)
		if f.ExitCode >= 0 {
			st.ExitCode, st.HasExitCode = f.ExitCode, true
		}
	}
	if r := c.retryNext; r != nil && !c.attempting && (c.state == StateConnecting || c.state == StateReconnecting) {
		rc := *r
		st.Retry = &rc
	}
}

// awaitRetry records and tells that try attempt of max starts after wait.
func (c *Conn) awaitRetry(attempt, max int, wait time.Duration) {
	c.mu.Lock()
	c.retryNext = &Retry{Attempt: attempt, Max: max, At: time.Now().Add(wait)}
	st := c.statusLocked()
	c.mu.Unlock()
	c.lifeLog(LevelWarning, fmt.Sprintf("retrying %d/%d in %s", attempt, max, roundWait(wait)))
	c.emitStatus(st)
}

// roundWait is a backoff as a person reads it: "0.5 s", "4 s".
func roundWait(d time.Duration) string {
	if d < 10*time.Second {
		return strconv.FormatFloat(math.Round(d.Seconds()*10)/10, 'f', -1, 64) + " s"
	}
	return strconv.Itoa(int(d.Round(time.Second).Seconds())) + " s"
}

// The levels of the Conn's own lines in a server's log (MCP's names).
const (
	LevelInfo    = "info"
	LevelWarning = "warning"
	LevelError   = "error"
)

// LogFreeCode is the Source of a Log line that tells the server's life
// as FreeCode saw it (starting, exited, retrying, gave up, stopped).
const LogFreeCode = "freecode"

// lifeLog puts a line of the server's life in its log, masked as its
// stderr is.
func (c *Conn) lifeLog(level, msg string) {
	c.emitLog(LogFreeCode, level, c.redactor.Load().String(msg))
}

// lifeGaveUp tells that the Conn gave up on the server after retries
// retries (0: the failure was final, no retry could help).
func (c *Conn) lifeGaveUp(err error, retries int) {
	if d := detail(err); d != "" {
		// The words are the user's; what lies under them is the sidecar's log's.
		c.logger.Warn("gave up on the server", "error", err, "detail", d)
	}
	switch {
	case retries == 1:
		c.lifeLog(LevelError, fmt.Sprintf("gave up after 1 retry: %v", err))
		return
	case retries > 1:
		c.lifeLog(LevelError, fmt.Sprintf("gave up after %d retries: %v", retries, err))
		return
	}
	c.lifeLog(LevelError, err.Error())
}

// detail is what FreeCode was doing when err happened, for its own log:
// the chain under a Failure's words; "" when err is no Failure.
func detail(err error) string {
	if f := failureOf(err); f != nil && f.Err != nil {
		return f.Err.Error()
	}
	return ""
}

// lifeConnected tells that the server came up, as st says.
func (c *Conn) lifeConnected(st Status) {
	msg := fmt.Sprintf("connected: %d tools", st.ToolCount)
	if st.ProtocolVersion != "" {
		msg += " (protocol " + st.ProtocolVersion + ")"
	}
	c.lifeLog(LevelInfo, msg)
}
