package workspace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/internal/audit"
	"github.com/freecode/freecode/internal/manifest"
	"github.com/freecode/freecode/internal/secretstore"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/mcp/oauth"
	"github.com/freecode/freecode/mcp/sandbox"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/permissions"
)

// Options configures a Workspace. A nil *Options means defaults.
type Options struct {
	// ConfigPath is the config file (default config.DefaultPath():
	// $FREECODE_CONFIG or ~/.freecode/config.json). The user's rule file
	// is settings.json beside it.
	ConfigPath string
	// Root is the project root: its .freecode/settings.json (servers and
	// rules) and .freecode/settings.local.json (rules) are loaded and
	// watched, and trust and approvals are recorded for it. "" means no
	// project.
	Root string
	// Logger receives the workspace's, the Manager's and every server's
	// logs. Nil means none.
	Logger *slog.Logger
	// Environ returns the environment ${env:NAME} references and local
	// servers' allowed variables come from (default os.Environ).
	Environ func() []string
	// Builtins are registered before any MCP tool.
	Builtins []*orchestrator.Tool
	// Want, if set, limits the servers run to those it returns true for:
	// the CLI connects only what one command needs. The others are neither
	// run nor listed; project servers awaiting approval are listed all the
	// same.
	Want func(server string) bool
	// Debounce and ForcePoll configure the file watcher (see
	// config.WatchOptions).
	Debounce  time.Duration
	ForcePoll bool
	// ResultsDir receives the whole text of results that were cut (see
	// orchestrator.Options).
	ResultsDir string
	// Roots are the MCP roots, directories, every server is shown at
	// first (see SetRoots); none, and servers are told of no roots
	// capability.
	Roots []string
	// NoRetry makes a server's failed first connect final instead of
	// retried with backoff, and a lost session reconnected once (see
	// mcp.ConnOptions.NoRetry): for a one-shot command that reports what
	// did not connect and exits.
	NoRetry bool
	// OpenURL opens an authorization URL for the user when a server asks
	// for more access mid-session (OAuth step-up) during a request that
	// has no Asker to show it (a request of no frontend's). Nil means no
	// one is asked: the server needs a sign-in.
	OpenURL oauth.OpenURLFunc
	// Elicitation and Sampling declare those capabilities to the servers:
	// set them when the frontends that bring an ExecOptions.Asker may
	// answer elicitation or sampling. A server's question then goes to
	// the Asker of the call it came during.
	Elicitation bool
	Sampling    bool
	// KeepTasks keeps the tasks of the calls it follows
	// (orchestrator.TasksTracked) on disk, under TasksDir beside the
	// config file, and follows those an earlier run left live: for the
	// sidecar, whose frontends were told of them.
	KeepTasks bool
	// TracerProvider and MeterProvider receive the spans and metrics of
	// every batch, call and MCP request (package telemetry sets them up
	// from the user's environment and the managed settings, never from a
	// config file); nil records none.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// OnCallEvent is handed each call's audit line as the trail's writer
	// makes it, with the time the call was over, whether or not the line
	// can be written: telemetry's freecode.tool_decision events
	// (telemetry.Providers.CallEvents), one source with the trail; ctx
	// holds the span context of the call's execute_tool span. The
	// line may hold the arguments' values (the policy's audit.arguments);
	// OnCallEvent takes what it sends of it. It is called from one
	// goroutine, the writer's, and should not block. Nil: none.
	OnCallEvent func(ctx context.Context, e audit.Event, at time.Time)
	// TelemetryArguments puts each call's arguments and result on its
	// execute_tool span (gen_ai.tool.call.arguments, .result), redacted as
	// the audit trail's argument values are, masked of its server's
	// secrets and cut to 4 KiB (telemetry.go): the telemetry block's
	// "arguments": true (telemetry.Providers.Arguments). False: never.
	TelemetryArguments bool
}

// Workspace is one running FreeCode for one project root. Its methods are
// safe for concurrent use. See the package documentation.
//
// Besides what it wires together (the registry, the orchestrator, the
// Manager), it is made of parts that each own their state, their lock and
// their Close: the definitions builder (defs.go), the MCP roots
// (roots.go), the log relay (logs.go) and the pinner (pins.go, with its
// reviews and its watcher of the manifests), beside the event fan-out
// (fanout.go) and what WaitSettled waits on (servers.go). Its own locks
// are reloadMu and mu.
//
// Lock order: a lock on the left may be held while one on its right is
// taken, never the other way round.
//
//	reloadMu → mu → pins.adoptMu, settled.mu, the fan-out's
//	reloadMu → the Manager's → roots.mu
//	reloadMu → pins.watchMu → pins.mu → pins.adoptMu
//	pins.mu → the registry's → defs.mu, settled.mu, the fan-out's
//	logs.mu → the fan-out's
//
// mu and pins.mu are never held together, nor mu and the Manager's;
// pins.adoptMu, defs.mu, settled.mu and the fan-out's lock are leaves.
// The Manager asks roots.clientOptions holding its own lock, and makes
// its other calls back (statuses to mu, tools to pins.mu, log lines to
// logs.mu) holding none of its locks.
//
// Close closes in this order, each part after whatever feeds it: the
// file watcher, the reloads (reloadMu: one in flight ends, none follows),
// the pinner's watcher of the manifests, the Manager (every server stops;
// what it reports as they go still reaches the parts after it), the log
// relay, the definitions builder, the roots, and last the fan-out, which
// closes the subscriptions.
type Workspace struct {
	opts   Options
	logger *slog.Logger
	root   string // absolute; "" without a project
	files  files

	// Set by New, then only read.
	watcher     *config.Watcher
	reg         *orchestrator.Registry
	orch        *orchestrator.Orchestrator
	perms       *permissions.Set // reloaded in place
	mgr         *mcp.Manager
	search      *orchestrator.ToolSearch
	unsubscribe func() // from the registry

	// The parts, each with its lock.
	defs    *defsBuilder
	roots   *rootSet
	logs    *logRelay
	pins    *pinner
	settled settleSignal
	events  fanout
	tasks   *taskTracker
	tel     *mcp.Telemetry      // the MCP requests' spans and durations
	gauges  metric.Registration // freecode.servers (telemetry.go); nil without a meter
	trail   trail               // the audit trail (audit.go)
	secrets *secretstore.Store  // the user's secrets (secrets.go); nil without a home

	closeOnce sync.Once

	// policyNow is the managed policy in force, for the Conns' last check
	// before they connect (mcp.ConnOptions.Policy); nil before the first
	// load.
	policyNow atomic.Pointer[policy]
	// identities are the approval hashes (config.EntryHash) of the
	// entries the Manager was last given, by name, as configured: a
	// server's identity in the audit trail.
	identities atomic.Pointer[map[string]string]

	// deferPolicy and autoDeferOn decide which tools are deferred (see
	// deferral.go). They are read on every definitions build and search.
	deferPolicy atomic.Pointer[deferral]
	autoDeferOn atomic.Bool

	// reloadMu serializes reloads (the watcher's, Approve's, SetTrusted's),
	// so that each starts from the state the previous one left. It guards
	// the fields below.
	reloadMu  sync.Mutex
	closed    bool
	published map[string][]Problem // by path: the problems last published
	// searchRegistered says tool_search is in the registry.
	searchRegistered bool

	// mu guards the fields below. Status events are published under it,
	// so that whether a server counts as awaiting approval and the order
	// of its statuses agree.
	mu       sync.Mutex
	cfg      *config.Config           // the last good config
	project  []config.Server          // the last good project servers
	trusted  bool                     // the project is trusted
	running  []config.Server          // what the Manager was given
	managed  map[string]bool          // names of running
	pending  map[string]config.Server // project servers awaiting approval
	blocked  map[string]blockedServer // servers the managed policy blocks
	policy   policy                   // the managed policy in force
	fileErrs map[string]*fileErrs     // by path

	// pendingRules is the rules' Pending as of the last load.
	pendingRules *permissions.Pending
}

// files are the paths of the files a workspace loads and watches.
type files struct {
	config    string
	userRules string
	// project is "" without a project, and in a project whose
	// settings.json is one of the user's files (see New).
	project string
	local   string // "" without a project
	// accepted is the user's record of the rules they accepted of the
	// project (permissions.AcceptedPath); "" without a project or a home.
	accepted string
	// managed and managedDrop are the organization's managed settings
	// file and drop-in directory (policy.go).
	managed, managedDrop string
}

// New loads the config, the project's servers and the rule files, starts
// watching them and starts connecting the servers; it does not wait for
// them (see WaitSettled). A file that does not load does not stop it: its
// problems are in Problems, and the workspace runs without what it would
// have held. Close the workspace when done.
func New(ctx context.Context, opts *Options) (*Workspace, error) {
	w := &Workspace{
		published: make(map[string][]Problem),
		fileErrs:  make(map[string]*fileErrs),
		managed:   make(map[string]bool),
		pending:   make(map[string]config.Server),
		blocked:   make(map[string]blockedServer),
	}
	if opts != nil {
		w.opts = *opts
	}
	w.roots = newRootSet(w.opts.Roots)
	w.logs = newLogRelay(w.events.publish)
	w.logger = w.opts.Logger
	if w.logger == nil {
		w.logger = slog.New(slog.DiscardHandler)
	}
	w.trail.logger = w.logger
	w.trail.events = w.opts.OnCallEvent
	path := w.opts.ConfigPath
	if path == "" {
		var err error
		if path, err = config.DefaultPath(); err != nil {
			return nil, err
		}
	}
	var err error
	if w.files.config, err = filepath.Abs(path); err != nil {
		return nil, fmt.Errorf("config path: %w", err)
	}
	// Wherever it is, no sandboxed server reads it.
	sandbox.GuardConfig(w.files.config)
	w.files.managed, w.files.managedDrop = managedPaths()
	w.files.userRules = filepath.Join(filepath.Dir(w.files.config), permissions.SettingsFile)
	if w.opts.Root != "" {
		if w.root, err = filepath.Abs(w.opts.Root); err != nil {
			return nil, fmt.Errorf("project root: %w", err)
		}
		w.files.project = config.ProjectSettingsPath(w.root)
		w.files.local = filepath.Join(filepath.Dir(w.files.project), permissions.LocalSettingsFile)
		// A project at the user's home: its settings.json is the user's
		// own file (or the config), read once as that, so that its rules
		// do not count twice nor its servers run twice, the second time
		// as a project's awaiting approval.
		if config.ProjectSettingsAreUsers(w.root, w.files.config) {
			w.files.project = ""
		}
		// Watched too: `freecode trust` may accept the rules in another
		// process.
		w.files.accepted, _ = permissions.AcceptedPath(w.root)
	}

	var store *taskStore
	if w.opts.KeepTasks {
		store = newTaskStore(filepath.Dir(w.files.config), w.root)
	}
	w.tasks = newTaskTracker(w.events.publish, store, w.root, w.logger)

	w.reg = orchestrator.NewRegistry(&orchestrator.RegistryOptions{Logger: w.logger})
	for _, t := range w.opts.Builtins {
		if err := w.reg.RegisterBuiltin(t); err != nil {
			return nil, err
		}
	}
	w.search = orchestrator.NewToolSearch(w.reg, &orchestrator.ToolSearchOptions{
		Searchable: w.deferred,
		Skip:       func(t *orchestrator.Tool) bool { return w.orch.Denied(t) },
		OnFound:    w.warm,
	})
	w.pins = newPinner(manifest.NewStore(filepath.Join(filepath.Dir(w.files.config), ManifestDir), nil), w.root,
		w.reg, w.runner, w.events.publish, w.logger,
		config.WatchOptions{Debounce: w.opts.Debounce, ForcePoll: w.opts.ForcePoll, Logger: w.logger})
	w.perms = &permissions.Set{}
	oopts := &orchestrator.Options{
		Permissions: w.perms,
		UserDir:     filepath.Dir(w.files.config),
		ProjectDir:  w.root,
		ResultsDir:  w.opts.ResultsDir,
		Logger:      w.logger,
		Reviewer:    definitionReviewer{w},
		Auditor:     w,
		WhyMissing:  w.whyMissing,

		TracerProvider: w.opts.TracerProvider,
		MeterProvider:  w.opts.MeterProvider,
	}
	if w.opts.TelemetryArguments {
		oopts.SpanContent = w.spanContent // called once the Manager is made: no call comes before
	}
	w.orch = orchestrator.New(w.reg, oopts)
	if w.opts.TracerProvider != nil || w.opts.MeterProvider != nil {
		w.tel = mcp.NewTelemetry(w.opts.TracerProvider, w.opts.MeterProvider)
	}
	// The hashes of the built-ins alone: what the first change is
	// compared against.
	if w.defs, err = newDefsBuilder(ctx, w.reg, w.deferred, w.events.publish, w.logger); err != nil {
		return nil, err
	}
	w.unsubscribe = w.reg.Subscribe(w.onRegistryChange)

	// The watcher starts before the first read, so that no change falls
	// between the two; its first reports wait for reloadMu.
	w.reloadMu.Lock()
	defer w.reloadMu.Unlock()
	w.watcher, err = config.Watch(context.WithoutCancel(ctx), w.files.watched(), &config.WatchOptions{
		OnChange:  w.onFiles,
		Debounce:  w.opts.Debounce,
		ForcePoll: w.opts.ForcePoll,
		Logger:    w.logger,
		DropIns:   []string{w.files.managedDrop},
	})
	if err != nil {
		w.unsubscribe()
		return nil, err
	}
	st := w.load(kindAll)
	// One store for every server, so that a keychain found not to
	// answer is not asked again for each; without one (no home
	// directory) each sign-in says why.
	if dir, err := config.SecretsDir(); err == nil {
		w.secrets = secretstore.Open(dir)
	}
	tokens, err := oauth.DefaultStore()
	if err != nil {
		w.logger.Warn("remote servers cannot keep a sign-in", "error", err)
	}
	w.mgr = mcp.NewManager(&mcp.ManagerOptions{
		ConnOptions: mcp.ConnOptions{
			Logger:   w.logger,
			OnStatus: w.onStatus,
			// Elicitation, sampling, the log level and the memory of
			// negotiated versions: caps.go.
			Elicitation: w.opts.Elicitation,
			Sampling:    w.opts.Sampling,
			LogLevel:    st.cfg.MCP.LogLevel,
			Versions:    mcp.NewVersionMemo(filepath.Join(filepath.Dir(w.files.config), mcp.VersionMemoFile)),
			// The health ping follows mcp.pollInterval as it is at start:
			// the Manager takes its period once.
			PingInterval:  st.cfg.MCP.PollInterval,
			Environ:       w.opts.Environ,
			NoRetry:       w.opts.NoRetry,
			Policy:        w.policyCheck,
			Secrets:       w.lookupSecret,
			ClientOptions: w.roots.clientOptions,
			OnClient:      w.roots.onClient,
			OnLog:         w.logs.onLog,
			// Sign-ins are the user's (oauth.DefaultStore), never kept
			// beside a config file, which may sit in a repository.
			Auth: &oauth.Options{Tokens: tokens, OpenURL: w.opts.OpenURL},
			// A span per connect, each session's duration.
			Telemetry: w.tel,
		},
		// Resources and prompts: caps.go.
		OnListChanged:  w.onListChanged,
		OnToolsChanged: w.pins.onTools,
		// Servers on demand: ondemand.go and pins.go.
		Manifest: w.pins.listing,
	})
	w.tasks.mgr, w.tasks.orch = w.mgr, w.orch
	if w.opts.MeterProvider != nil {
		if w.gauges, err = w.observeServers(w.opts.MeterProvider); err != nil {
			w.logger.Warn("telemetry: the servers' gauge cannot be read", "error", err)
		}
	}
	w.defs.start()
	w.apply(ctx, st)
	w.tasks.resume() // once the servers are configured: a task of one gone fails
	return w, nil
}

// list returns the paths to watch: the config, then the rule files.
func (f files) list() []string {
	return append([]string{f.config}, f.rules()...)
}

// watched returns the paths to watch: list, the record of accepted rules,
// and the managed settings.
func (f files) watched() []string {
	out := f.list()
	if f.accepted != "" {
		out = append(out, f.accepted)
	}
	return append(out, f.managed, f.managedDrop)
}

// rules returns the paths of the rule files (the project's settings hold
// rules as well as servers).
func (f files) rules() []string {
	out := []string{f.userRules}
	for _, p := range []string{f.project, f.local} {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Close stops everything the workspace runs and waits for it: the file
// watcher, every server (processes reaped), its goroutines. Subscriptions
// are closed last; what was still queued for them is dropped. It is safe to
// call more than once. The order is the one stated at Workspace.
func (w *Workspace) Close() error {
	w.closeOnce.Do(func() {
		if w.gauges != nil {
			w.gauges.Unregister() // nothing reads the statuses of a closed workspace
		}
		w.watcher.Close()
		w.reloadMu.Lock() // an Approve or SetTrusted in flight ends first
		w.closed = true
		w.pins.Close()
		w.reloadMu.Unlock()
		w.tasks.close() // before the servers stop: their tasks stay on disk, live
		w.mgr.Close()
		w.trail.close() // after the servers: nothing more is called
		w.logs.Close()
		w.unsubscribe()
		w.defs.Close()
		w.roots.Close()
		w.events.close()
	})
	return nil
}

// Subscribe returns a subscription to the workspace's events. To follow the
// state without a gap, subscribe first, then read Statuses, Problems and
// the rest: what changes after is in the events.
func (w *Workspace) Subscribe(opts *SubscribeOptions) *Subscription {
	return w.events.subscribe(opts)
}

// Tools returns the tools of server ("" for every tool, built-ins first) in
// the defs cache's stable order.
//
// Each says which allow rule lets its calls run unasked (AllowedBy), as
// the rules decide now: a change of the rules publishes a
// RulesChangedEvent.
func (w *Workspace) Tools(server string) []orchestrator.ToolInfo {
	infos := w.reg.Infos(server)
	for i := range infos {
		t := &infos[i]
		if d := w.perms.Decide(t.ID, t.Alias, t.ReadOnly); d.Effect == permissions.Allow && d.Rule != nil {
			r := *d.Rule
			t.AllowedBy = &r
		}
	}
	return infos
}

// Definitions returns the tools array of format f for a provider request,
// with its hash, from the defs cache, and the conversion problems of the
// build that made it (tools left out of the array, or converted with a
// warning).
func (w *Workspace) Definitions(ctx context.Context, f defscache.Format) (*defscache.Entry, []orchestrator.DefsProblem, error) {
	return w.defs.definitions(ctx, f)
}

// Execute runs one batch of tool calls through the orchestrator:
// validation, the rules in force, batching, timeouts, result caps. Each
// frontend brings its own ExecOptions: the Approver that asks its user,
// where progress goes. Results come in the order of calls.
func (w *Workspace) Execute(ctx context.Context, calls []orchestrator.ToolCall, eo *orchestrator.ExecOptions) []orchestrator.ToolResult {
	return w.orch.Execute(ctx, calls, eo)
}

// Rules returns the permission rules in force, as permissions.Set.Rules
// lists them.
func (w *Workspace) Rules() []permissions.Rule {
	return w.perms.Rules()
}

// RemoveAllow takes back an "always allow" answer (a frontend's Undo): the
// allow rule pattern leaves the session's rules, and the rule file of
// scope with the rules the user accepted of it
// (permissions.RemoveScopeAllow), and the rules are read again. A scope
// of local in a workspace without a project means the user's file, as
// the answer did. It returns the file and whether it held the rule.
func (w *Workspace) RemoveAllow(ctx context.Context, scope orchestrator.Scope, pattern string) (string, bool, error) {
	src := permissions.SourceLocal
	switch {
	case scope == orchestrator.ScopeUser || scope == orchestrator.ScopeLocal && w.root == "":
		src = permissions.SourceUser
	case scope != orchestrator.ScopeLocal:
		return "", false, fmt.Errorf("removing allow rule %q: scope %q is neither local nor user", pattern, scope)
	}
	if err := permissions.Validate(pattern); err != nil {
		return "", false, fmt.Errorf("removing allow rule %q: %w", pattern, err)
	}
	w.reloadMu.Lock()
	defer w.reloadMu.Unlock()
	if w.closed {
		return "", false, errors.New("removing an allow rule: the workspace is closed")
	}
	before := w.perms.Rules()
	if _, err := w.perms.RemoveSession(pattern); err != nil {
		return "", false, err
	}
	path, removed, err := permissions.RemoveScopeAllow(src, filepath.Dir(w.files.config), w.root, pattern)
	// The rules as they are now, the session's change included in what
	// the RulesChangedEvent compares.
	st := w.load(kindRules)
	st.rulesBefore = before
	w.apply(ctx, st)
	if err != nil {
		return path, removed, fmt.Errorf("removing allow rule %q from %s: %w", pattern, path, err)
	}
	w.logger.Info("an always-allow answer was taken back", "rule", pattern, "file", path, "inFile", removed)
	return path, removed, nil
}

// ProjectInfo describes a workspace's project and files.
type ProjectInfo struct {
	Root          string
	Trusted       bool
	ConfigPath    string
	SettingsPaths SettingsPaths
	// PendingRules is what the trusted project's rule files loosen beyond
	// the rules the user accepted, held back until accepted (AcceptRules);
	// nil when nothing awaits.
	PendingRules *permissions.Pending
}

// SettingsPaths are the rule files a workspace loads.
type SettingsPaths struct {
	User    string
	Project string
	Local   string
}

// Project describes the project, its trust and the files in use.
func (w *Workspace) Project() ProjectInfo {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.projectLocked()
}

func (w *Workspace) projectLocked() ProjectInfo {
	return ProjectInfo{
		Root:         w.root,
		Trusted:      w.trusted,
		PendingRules: w.pendingRules,
		ConfigPath:   w.files.config,
		SettingsPaths: SettingsPaths{
			User:    w.files.userRules,
			Project: w.files.project,
			Local:   w.files.local,
		},
	}
}

// want reports whether the server is to be run (Options.Want).
func (w *Workspace) want(name string) bool {
	return w.opts.Want == nil || w.opts.Want(name)
}
