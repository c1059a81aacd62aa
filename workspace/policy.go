package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/mcp"
)

// The organization's managed policy (config.Managed): which servers may
// run, the rules no one else loosens, the sandbox minimum. It is read
// from the system's directory for it, watched like every other file, and
// applied above every other scope: a blocked server is never given to the
// Manager (so neither the sidecar, the gateway, a call that would start
// it on demand, nor an approval starts it) and is listed as blocked, with
// why; the managed rules join the permission set's.

// policy is the managed policy in force and why it is what it is.
type policy struct {
	// m is the last good policy; nil when none was ever read.
	m *config.Managed
	// err is why the managed files did not load last time; with m nil,
	// every server is blocked (see block).
	err error
}

// loadPolicy reads the managed files. One that does not parse keeps the
// last good policy in force; without one, the policy that cannot be read
// blocks every server, since a policy FreeCode cannot read is not one it
// may take for absent.
func (w *Workspace) loadPolicy(prev policy) policy {
	m, err := config.LoadManaged()
	if err != nil {
		if prev.m != nil {
			w.logger.Error("the organization's managed settings do not load; the last good ones stay in force", "error", err)
		} else {
			w.logger.Error("the organization's managed settings do not load; no server runs until they do", "error", err)
		}
		return policy{m: prev.m, err: err}
	}
	for _, p := range m.Problems {
		at := p.Path
		if p.Line > 0 {
			at = fmt.Sprintf("%s:%d:%d", p.Path, p.Line, p.Col)
		}
		w.logger.Warn("managed settings: "+p.Msg, "at", at, "key", p.Key)
	}
	for _, f := range m.Files {
		if f.UserWritable {
			w.logger.Warn("a managed settings file is writable by this user, who can change the policy it sets", "file", f.Path)
		}
	}
	return policy{m: m}
}

// block returns why the policy blocks s, or nil.
func (p policy) block(s config.Server, lookup func(string) (string, bool)) *config.Blocked {
	if p.m == nil && p.err != nil {
		return &config.Blocked{Reason: "blocked because your organization's managed settings cannot be read: " + p.err.Error()}
	}
	return p.m.Check(s, lookup)
}

// policyCheck is the Conns' last check before they connect: the policy
// in force, which the workspace already applied.
func (w *Workspace) policyCheck(s config.Server, lookup func(string) (string, bool)) *config.Blocked {
	p := w.policyNow.Load()
	if p == nil {
		return nil // not yet loaded: nothing was given to the Manager either
	}
	return p.block(s, lookup)
}

// lookupEnv is how ${env:NAME} is expanded for the policy's matching: in
// the environment servers get theirs from.
func (w *Workspace) lookupEnv() func(string) (string, bool) {
	if w.opts.Environ == nil {
		return os.LookupEnv
	}
	return mcp.EnvLookup(w.opts.Environ())
}

// blockedServer is a server the policy blocks, and why.
type blockedServer struct {
	srv config.Server
	why *config.Blocked
}

// blockedStatus is the status of a server the policy blocks.
func (b blockedServer) status() mcp.Status {
	st := mcp.StatusOf(b.srv, mcp.StateBlocked)
	st.Blocked = b.why.String()
	return st
}

// managedPaths are the managed file and drop-in directory the workspace
// watches.
func managedPaths() (file, dropIns string) {
	dir := config.ManagedDir()
	return filepath.Join(dir, config.ManagedSettingsName), filepath.Join(dir, config.ManagedDropInsName)
}

// blockedError is ErrBlocked for one server: "server "x" is blocked by
// your organization's policy: deniedMcpServers[2] in …".
type blockedError struct {
	name string
	why  *config.Blocked
}

func (e *blockedError) Error() string {
	return fmt.Sprintf("server %q is %s", e.name, e.why)
}

func (e *blockedError) Is(target error) bool { return target == ErrBlocked }

// whyMissing is the orchestrator's WhyMissing: a tool of a server the
// policy blocks, or of a project server awaiting approval, is missing
// for that reason.
func (w *Workspace) whyMissing(tool string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for name, b := range w.blocked {
		if strings.HasPrefix(tool, "mcp__"+name+"__") && !w.managed[name] {
			return (&blockedError{name: name, why: b.why}).Error()
		}
	}
	for name := range w.pending {
		if strings.HasPrefix(tool, "mcp__"+name+"__") && !w.managed[name] {
			return fmt.Sprintf("project server %q awaits your approval", name)
		}
	}
	return ""
}

// isManaged reports whether path is a managed settings file.
func (f files) isManaged(path string) bool {
	return path == f.managed || filepath.Dir(path) == f.managedDrop
}

// problemPaths are the files whose problems are published, in order: the
// config and rule files, then the managed files that have problems
// (fileErrs) or had them (published, if not nil: a fixed one publishes
// its empty list once).
func (w *Workspace) problemPaths(fileErrs map[string]*fileErrs, published map[string][]Problem) []string {
	out := w.files.list()
	var managed []string
	for p := range fileErrs {
		if w.files.isManaged(p) {
			managed = append(managed, p)
		}
	}
	for p, probs := range published {
		if w.files.isManaged(p) && len(probs) > 0 && fileErrs[p] == nil {
			managed = append(managed, p)
		}
	}
	slices.Sort(managed)
	return append(out, slices.Compact(managed)...)
}
