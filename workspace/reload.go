package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/permissions"
)

// kind is a set of the files a reload reads again.
type kind uint8

const (
	kindConfig    kind = 1 << iota // config.json: servers, approvals, trust, knobs
	kindUserRules                  // ~/.freecode/settings.json
	kindProject                    // <root>/.freecode/settings.json: servers and rules
	kindLocal                      // <root>/.freecode/settings.local.json
	kindAccepted                   // the user's record of the project's accepted rules
	kindManaged                    // the organization's managed settings: servers and rules
	kindAll       = kindConfig | kindUserRules | kindProject | kindLocal | kindAccepted | kindManaged
	kindRules     = kindUserRules | kindProject | kindLocal | kindAccepted | kindManaged
)

// fileErrs is why a file did not load, per part of FreeCode that reads it,
// and its warnings.
type fileErrs struct {
	servers  error // config.Load or config.LoadProject
	rules    error // the permissions loader
	warnings []permissions.Warning
	// keys are the keys of the servers' part FreeCode ignores (config's
	// warnings), of the file as it loaded or failed to.
	keys []config.Problem
	// managed are a managed settings file's problems, errors and
	// warnings (config.Managed.Problems).
	managed []config.Problem
}

// state is what one reload read: the next state of the workspace.
type state struct {
	kinds        kind
	cfg          *config.Config
	project      []config.Server
	trusted      bool
	trustChanged bool
	policy       policy
	rulesBefore  []permissions.Rule // nil unless the rules were reloaded
	fileErrs     map[string]*fileErrs
}

// onFiles is the watcher's report: the files that changed.
func (w *Workspace) onFiles(changes []config.Change) {
	var k kind
	for _, c := range changes {
		w.auditFile(c.Path)
		switch c.Path {
		case w.files.config:
			k |= kindConfig
		case w.files.userRules:
			k |= kindUserRules
		case w.files.project:
			k |= kindProject
		case w.files.local:
			k |= kindLocal
		case w.files.accepted:
			k |= kindAccepted
		case w.files.managed, w.files.managedDrop:
			k |= kindManaged
		}
	}
	w.reload(context.Background(), k)
}

// reload reads the files of kinds again and applies what they now say.
// The files are read here rather than taken from the watcher's report, so
// that a reload after Approve's own write never applies an older read.
func (w *Workspace) reload(ctx context.Context, kinds kind) {
	w.reloadMu.Lock()
	defer w.reloadMu.Unlock()
	if w.closed {
		return
	}
	w.apply(ctx, w.load(kinds))
}

// load reads the files of kinds and reloads the rules if they or the
// project's trust changed. The caller holds reloadMu. A file that does not
// load leaves what it held as it was.
func (w *Workspace) load(kinds kind) *state {
	w.mu.Lock()
	st := &state{kinds: kinds, cfg: w.cfg, project: w.project, policy: w.policy, fileErrs: make(map[string]*fileErrs, len(w.fileErrs))}
	for p, fe := range w.fileErrs {
		c := *fe
		st.fileErrs[p] = &c
	}
	trusted := w.trusted
	w.mu.Unlock()
	errsOf := func(path string) *fileErrs {
		if st.fileErrs[path] == nil {
			st.fileErrs[path] = &fileErrs{}
		}
		return st.fileErrs[path]
	}

	if kinds&kindConfig != 0 {
		cfg, err := config.Load(w.files.config)
		fe := errsOf(w.files.config)
		fe.servers, fe.keys = err, configWarnings(cfg, err)
		if err == nil {
			st.cfg = cfg
		}
	}
	if kinds&kindManaged != 0 {
		st.policy = w.loadPolicy(st.policy)
		for p := range st.fileErrs {
			if w.files.isManaged(p) {
				delete(st.fileErrs, p)
			}
		}
		if err := st.policy.err; err != nil {
			path := w.files.managed
			if pe := (*config.ParseError)(nil); errors.As(err, &pe) {
				path = pe.Path
			}
			errsOf(path).servers = err
		} else {
			for _, p := range st.policy.m.Problems {
				fe := errsOf(p.Path)
				fe.managed = append(fe.managed, p.Problem)
			}
		}
	}
	if st.cfg == nil { // the first load, of a file that does not load
		st.cfg, _ = config.Parse(w.files.config, nil)
	}
	if kinds&kindProject != 0 && w.files.project != "" {
		servers, keys, err := config.LoadProjectWarnings(w.root)
		fe := errsOf(w.files.project)
		fe.servers, fe.keys = err, keys
		if ve := (*config.ValidationError)(nil); errors.As(err, &ve) {
			fe.keys = ve.Warnings
		}
		if err == nil {
			st.project = servers
		}
	}
	st.trusted = w.root != "" && st.cfg.IsTrusted(w.root)
	st.trustChanged = st.trusted != trusted
	if kinds&kindRules != 0 || st.trustChanged {
		st.rulesBefore = w.perms.Rules()
		opts := permissions.LoadOptions{
			UserFile:   w.files.userRules,
			ProjectDir: w.root,
			Trusted:    st.trusted,
		}
		if m := st.policy.m; m != nil {
			opts.Managed, opts.ManagedOnly, opts.ManagedMessage = m.Permissions, m.ManagedRulesOnly, m.Message
			if len(m.Files) > 0 {
				opts.ManagedPath = m.Files[0].Path
			}
		}
		if st.trusted {
			opts.Accepted = w.acceptedRules(opts)
		}
		warnings, err := w.perms.Reload(opts)
		// Every rule file was read: its old errors and warnings go.
		for _, p := range w.files.rules() {
			fe := errsOf(p)
			fe.rules, fe.warnings = nil, nil
		}
		for _, e := range unjoin(err) {
			fe := errsOf(w.ruleFileOf(e))
			fe.rules = errors.Join(fe.rules, e)
		}
		for _, wn := range warnings {
			fe := errsOf(wn.Path)
			fe.warnings = append(fe.warnings, wn)
		}
	}
	return st
}

// acceptedRules returns the rules the user accepted of the trusted
// project, for a load. A project trusted before FreeCode kept them has its
// rules as they are now adopted as accepted, once; an unreadable record
// holds the project's files to no rule of theirs accepted (allow rules
// await review), rather than to whatever they say. The caller holds
// reloadMu.
func (w *Workspace) acceptedRules(opts permissions.LoadOptions) *permissions.Accepted {
	acc, err := permissions.ReadAccepted(w.root)
	if acc != nil {
		return acc
	}
	if err == nil {
		var adopted bool
		acc, adopted, err = permissions.Adopt(opts)
		switch {
		case adopted && err != nil:
			w.logger.Warn("the project was trusted before FreeCode kept the rules you accept; its rules as they are now are taken as accepted, for this run only", "error", err)
		case adopted:
			w.logger.Info("the project was trusted before FreeCode kept the rules you accept; its rules as they are now are taken as accepted from here on", "project", w.root, "record", w.files.accepted)
		}
		if acc != nil {
			return acc
		}
	}
	w.logger.Error("the rules you accepted of this project cannot be read; its allow rules await your review (`freecode trust`)", "error", err)
	return &permissions.Accepted{}
}

// apply puts a loaded state in force: servers through the Manager, knobs
// into the orchestrator and the watcher, and publishes what changed. The
// caller holds reloadMu.
func (w *Workspace) apply(ctx context.Context, st *state) {
	pending := w.perms.Pending()
	w.mu.Lock()
	pendingChanged := !reflect.DeepEqual(pending, w.pendingRules)
	w.cfg, w.project, w.trusted, w.fileErrs, w.pendingRules = st.cfg, st.project, st.trusted, st.fileErrs, pending
	w.policy = st.policy
	w.policyNow.Store(&st.policy)
	var aud config.ManagedAudit
	if st.policy.m != nil {
		aud = st.policy.m.Audit
	}
	w.trail.configure(config.AuditDir(w.files.config, st.policy.m), aud.Arguments, aud.MaxFileBytes)
	project := w.projectLocked()
	w.mu.Unlock()

	if st.kinds&(kindConfig|kindProject|kindManaged) != 0 {
		w.applyServers(ctx, st.cfg, st.project, st.policy)
		w.mu.Lock()
		running := w.running
		w.mu.Unlock()
		w.applyDeferral(st.cfg, running)
	}
	w.orch.SetMaxResultChars(st.cfg.MCP.MaxResultChars)
	w.orch.SetMaxParallel(st.cfg.MCP.MaxParallel)
	w.mgr.SetLogLevel(st.cfg.MCP.LogLevel)
	w.watcher.SetPollInterval(st.cfg.MCP.PollInterval)
	if st.kinds&(kindConfig|kindProject|kindManaged) != 0 {
		// After the knobs: a new watcher takes a moment to set up.
		w.mu.Lock()
		running := w.running
		w.mu.Unlock()
		w.pins.watchManifests(running)
	}

	var evs []Event
	for _, path := range w.problemPaths(st.fileErrs, w.published) {
		fe := st.fileErrs[path]
		probs, err := fe.problems(), fe.err()
		if slices.Equal(probs, w.published[path]) {
			continue
		}
		fixed := len(probs) == 0 && len(w.published[path]) > 0
		w.published[path] = probs
		evs = append(evs, &ProblemsEvent{Path: path, Problems: probs, Err: err, RulesErr: fe.rulesErr(), Summary: w.files.summary(path, probs, err)})
		w.logProblems(path, probs, fixed)
	}
	if st.rulesBefore != nil {
		if rules := w.perms.Rules(); !slices.Equal(rules, st.rulesBefore) {
			evs = append(evs, &RulesChangedEvent{Rules: rules})
		}
	}
	if st.trustChanged || pendingChanged {
		evs = append(evs, &ProjectEvent{Project: project})
	}
	w.events.publish(evs...)
}

// ruleFileOf finds the rule file an error of the permissions loader is
// about: a parse error and a failed stat carry the path; the loader's other
// read errors name it in their text.
func (w *Workspace) ruleFileOf(err error) string {
	var pe *config.ParseError
	if errors.As(err, &pe) {
		return pe.Path
	}
	var fe *fs.PathError
	if errors.As(err, &fe) && slices.Contains(w.files.rules(), fe.Path) {
		return fe.Path
	}
	for _, p := range w.files.rules() {
		if strings.Contains(err.Error(), p) {
			return p
		}
	}
	return w.files.userRules
}

// unjoin returns the errors errors.Join put together, or err alone.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// err returns why the file does not load, nil if it loads: the servers'
// reader's error first, since a syntax error is both readers' alike.
func (fe *fileErrs) err() error {
	switch {
	case fe == nil:
		return nil
	case fe.servers != nil:
		return fe.servers
	}
	return fe.rules
}

// rulesErr returns why the file's permission rules do not load.
func (fe *fileErrs) rulesErr() error {
	if fe == nil {
		return nil
	}
	return fe.rules
}

// problems returns the file's problems as a frontend shows them: never nil,
// so that a fixed file publishes an empty list. A syntax error that both
// readers of the project's settings report is listed once.
func (fe *fileErrs) problems() []Problem {
	out := []Problem{}
	if fe == nil {
		return out
	}
	add := func(p Problem) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, err := range []error{fe.servers, fe.rules} {
		for _, e := range unjoin(err) {
			for _, p := range errorProblems(e) {
				add(p)
			}
		}
	}
	for _, p := range fe.keys {
		add(configProblem(p, SeverityWarning))
	}
	for _, p := range fe.managed {
		sev := SeverityError
		if p.Warning {
			sev = SeverityWarning
		}
		add(configProblem(p, sev))
	}
	for _, wn := range fe.warnings {
		msg := wn.Msg
		if wn.Effect != 0 {
			msg = fmt.Sprintf("ignored %s rule %q: %s", wn.Effect, wn.Pattern, wn.Msg)
		}
		add(Problem{Message: msg, Line: wn.Line, Column: wn.Col, Severity: SeverityWarning})
	}
	return out
}

// logProblems logs a file's problems once, when they change, whoever
// listens: a sidecar run from a terminal, or one whose frontend shows none,
// still says why its config did not load.
func (w *Workspace) logProblems(path string, probs []Problem, fixed bool) {
	if fixed {
		w.logger.Info("config file fixed", "file", path)
	}
	for _, p := range probs {
		level := slog.LevelError
		if p.Severity == SeverityWarning {
			level = slog.LevelWarn
		}
		w.logger.Log(context.Background(), level, "config problem", "at", p.at(path), "problem", p.Message)
	}
}

// at is where the problem is: its Position, then the key.
func (p Problem) at(path string) string {
	s := p.Position(path)
	if p.Key != "" {
		s += " " + p.Key
	}
	return s
}

// Position is where the problem is in the file path, as a compiler says
// it, which editors and terminals turn into a link: path:line:column, as
// far as the line and column are known.
func (p Problem) Position(path string) string {
	s := path
	if p.Line > 0 {
		s += ":" + strconv.Itoa(p.Line)
		if p.Column > 0 {
			s += ":" + strconv.Itoa(p.Column)
		}
	}
	return s
}

// errorProblems turns a load error into problems, with line and column or
// key where the error has them.
func errorProblems(err error) []Problem {
	var pe *config.ParseError
	if errors.As(err, &pe) {
		return []Problem{{Message: pe.Msg, Line: pe.Line, Column: pe.Col, Severity: SeverityError}}
	}
	var ve *config.ValidationError
	if errors.As(err, &ve) {
		out := make([]Problem, 0, len(ve.Problems))
		for _, p := range ve.Problems {
			out = append(out, configProblem(p, SeverityError))
		}
		return out
	}
	return []Problem{{Message: err.Error(), Severity: SeverityError}}
}

// summary says in one line what the problems probs of the file path
// mean: how many, and, when the file does not load (err), that what it
// last held is what runs.
func (f files) summary(path string, probs []Problem, err error) string {
	if len(probs) == 0 {
		return ""
	}
	what, kept := "the user's rules have", "the last good rules stay in force"
	switch {
	case f.isManaged(path):
		what, kept = "your organization's managed settings have", "its last good policy stays in force"
	case path == f.config:
		what, kept = "the config has", "showing the last good one"
	case path == f.project:
		what, kept = "the project's settings have", "showing the last good ones"
	case path == f.local:
		what = "the project's local rules have"
	}
	if err == nil {
		return fmt.Sprintf("%s %s", what, plural(len(probs), "warning"))
	}
	return fmt.Sprintf("%s %s; %s", what, plural(len(probs), "problem"), kept)
}

// plural is "1 problem", "2 problems".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// configProblem is a problem of the config package's as a frontend is
// shown it.
func configProblem(p config.Problem, sev Severity) Problem {
	msg := p.Msg
	if p.Server != "" {
		msg = fmt.Sprintf("server %q: %s", p.Server, p.Msg)
	}
	return Problem{Message: msg, Line: p.Line, Column: p.Col, Key: p.Key, Severity: sev}
}

// configWarnings returns the ignored keys of a config file that loaded
// (cfg) or did not (err).
func configWarnings(cfg *config.Config, err error) []config.Problem {
	if ve := (*config.ValidationError)(nil); errors.As(err, &ve) {
		return ve.Warnings
	}
	if cfg != nil {
		return cfg.Warnings
	}
	return nil
}

// Problems returns the current problems of every watched file that has
// some, in the order the files are watched: what a frontend that connects
// late shows.
func (w *Workspace) Problems() []ProblemsEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []ProblemsEvent
	for _, path := range w.problemPaths(w.fileErrs, nil) {
		fe := w.fileErrs[path]
		if probs := fe.problems(); len(probs) > 0 {
			out = append(out, ProblemsEvent{Path: path, Problems: probs, Err: fe.err(), RulesErr: fe.rulesErr(), Summary: w.files.summary(path, probs, fe.err())})
		}
	}
	return out
}
