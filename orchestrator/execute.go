package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/errgroup"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/hoptrace"
	"github.com/freecode/freecode/permissions"
)

// progressExtensions is how far progress notifications may stretch a call:
// toolTimeout restarts on each one, up to this many toolTimeouts in all.
const progressExtensions = 4

// Options configures an Orchestrator. A nil *Options means defaults.
type Options struct {
	// Permissions are the rules the gate applies; nil means no rules (read-
	// only tools are allowed, everything else asks). SetPermissions swaps them.
	Permissions *permissions.Set
	// UserDir (~/.freecode) and ProjectDir (the project root) locate the
	// rule files an "always allow" answer is written to.
	UserDir, ProjectDir string
	// MaxParallel bounds the read-only calls of a batch run at once
	// (default config.DefaultMaxParallel; config.json's mcp.maxParallel).
	// SetMaxParallel changes it.
	MaxParallel int
	// ToolTimeout applies to the tools whose Runner says none (default
	// config.DefaultToolTimeout).
	ToolTimeout time.Duration
	// MaxResultChars caps a result's text (default
	// config.DefaultMaxResultChars; negative means no cap).
	MaxResultChars int
	// ResultsDir receives the whole text of results that were cut (default
	// os.UserCacheDir()/freecode/results).
	ResultsDir string
	Logger     *slog.Logger
	// Reviewer, if set, is asked about the tools whose definition awaits
	// review, and told when the user accepts one in answer to a prompt.
	Reviewer DefinitionReviewer
	// Auditor, if set, is told what became of every call (audit.go).
	Auditor Auditor
	// WhyMissing, if set, says why a tool the registry does not hold is
	// missing (its server is blocked by the organization's policy, or
	// awaits approval), for the result of a call of it; "" when it does
	// not know.
	WhyMissing func(tool string) string
	// TracerProvider and MeterProvider receive the spans and metrics of
	// every batch and call, made after each batch of what its path kept
	// (timeline.go); nil records none. A provider that is an
	// otelset.Laterer (package telemetry's) makes them beside the calls,
	// with the span IDs Call.Trace and CallRecord.Span gave out; another
	// makes them at the batch's end with IDs of its own.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// SpanContent, if set, is what of a call's arguments and result its
	// execute_tool span carries, as gen_ai.tool.call.arguments and
	// gen_ai.tool.call.result ("" leaves one out), asked as the span
	// ends: the privacy setting's opt-in (the workspace's
	// TelemetryArguments), which redacts them. Nil: neither is recorded.
	SpanContent func(CallRecord) (args, result string)
}

// Orchestrator runs batches of tool calls against a Registry.
// It is safe for concurrent use; concurrent batches are independent.
type Orchestrator struct {
	reg  *Registry
	opts Options // defaults applied
	log  *slog.Logger

	perms       atomic.Pointer[permissions.Set]
	maxChars    atomic.Int64 // Options.MaxResultChars, changeable
	maxParallel atomic.Int64 // Options.MaxParallel, changeable
	asking      askTurns     // the permission questions open, by tool (asking.go)
	tel         instruments  // spans and metrics (telemetry.go)
}

// New returns an orchestrator over reg.
func New(reg *Registry, opts *Options) *Orchestrator {
	o := &Orchestrator{reg: reg}
	if opts != nil {
		o.opts = *opts
	}
	if o.opts.ToolTimeout <= 0 {
		o.opts.ToolTimeout = config.DefaultToolTimeout
	}
	if o.opts.MaxResultChars == 0 {
		o.opts.MaxResultChars = config.DefaultMaxResultChars
	}
	o.log = o.opts.Logger
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	o.tel = newInstruments(o.opts.TracerProvider, o.opts.MeterProvider)
	o.maxChars.Store(int64(o.opts.MaxResultChars))
	o.SetMaxParallel(o.opts.MaxParallel)
	if o.opts.Permissions != nil {
		o.perms.Store(o.opts.Permissions)
	}
	return o
}

// SetPermissions replaces the rules (after a settings file changed).
// Calls already past the gate are not affected.
func (o *Orchestrator) SetPermissions(s *permissions.Set) { o.perms.Store(s) }

// SetMaxResultChars changes the result cap (after config.json changed).
// Zero means the default, negative no cap.
func (o *Orchestrator) SetMaxResultChars(n int) {
	if n == 0 {
		n = config.DefaultMaxResultChars
	}
	o.maxChars.Store(int64(n))
}

// SetMaxParallel changes how many read-only calls of a batch run at once
// (after config.json changed); batches already running keep their bound.
// Zero or less means config.DefaultMaxParallel.
func (o *Orchestrator) SetMaxParallel(n int) {
	if n <= 0 {
		n = config.DefaultMaxParallel
	}
	o.maxParallel.Store(int64(n))
}

// ExecOptions are the per-batch parts of an execution.
type ExecOptions struct {
	// Approver is asked when a rule says "ask"; nil means nobody can be
	// asked, and "ask" is a denial that names the rule to add.
	Approver Approver
	// OnProgress relays MCP progress of a call. It may be called
	// concurrently for different calls.
	OnProgress func(callID string, p Progress)
	// OnWarning, if set, is told what the user should know about a call
	// beyond its result, such as an "always allow" answer that holds for
	// this session only (its rule could not be saved, or went to an
	// untrusted project's file). Warnings are logged too.
	OnWarning func(callID, msg string)
	// Asker answers what a tool's server asks a person while it serves
	// a call of the batch (see Asker): the orchestrator hands it to each
	// call's Runner (Call.Asker). Nil: nobody is asked; an elicitation is
	// declined and sampling refused. A frontend brings the same Asker to
	// each of its batches.
	Asker Asker
	// Tasks is what becomes of a call its server runs as a task
	// (tasks.go); TasksAwaited by default.
	Tasks TaskMode
	// Frontend names whose batch it is, for the audit trail (Auditor):
	// a frontend's clientInfo name, "cli", "gateway:<client>".
	Frontend string
	// TraceParent and TraceState are the W3C trace context of what asked
	// for the batch (the model turn's span, sent by a frontend): the
	// batch's span is its child, and the trace goes on to the servers.
	// "": the batch starts a trace.
	TraceParent, TraceState string
}

// prepared is one call after lookup and validation.
type prepared struct {
	call ToolCall
	tool *Tool
	args map[string]any
	done bool // the result is final (unknown tool, invalid arguments)

	// What the gate decided by, for the audit trail: the rule (nil: no
	// rule) and the answer of the person asked ("": nobody answered).
	rule   *permissions.Rule
	answer AnswerDecision
	// askedLater: the question went to another round (ErrAskedLater),
	// so nothing was decided; that round's call is the one audited.
	askedLater bool

	// The call's timeline and, while the gate decides, its permission
	// span (timeline.go); kept when the call is prepared again.
	tr       *callTrace
	gateSpan *pendingSpan
}

// Execute runs one batch: the calls one model turn produced, in order.
// Consecutive read-only calls run together (at most MaxParallel at once);
// any other call waits for what runs, runs alone, then the batch goes on.
// Results come back in the order of calls. Cancelling ctx cancels the calls
// that run and fails the ones that have not started.
func (o *Orchestrator) Execute(ctx context.Context, calls []ToolCall, eo *ExecOptions) []ToolResult {
	if eo == nil {
		eo = &ExecOptions{}
	}
	results := make([]ToolResult, len(calls))
	preps := make([]prepared, len(calls))
	batch := o.tel.startBatch(eo, len(calls))
	defer batch.finish()
	for i, c := range calls {
		tr := batch.startCall(i, c)
		v := tr.child(nil, "freecode.validate")
		preps[i] = o.prepare(c, &results[i])
		preps[i].tr = tr
		endValidate(v, &preps[i])
	}
	// Decided on what the servers list now, not on a manifest's list.
	defer o.ready(ctx, preps, results)()
	hoptrace.Stage(hoptrace.FromRequest, "5 request → servers ready")
	for i := 0; i < len(preps); {
		// A group is one non-read-only call, or the longest run of read-only
		// calls (calls that will not run at all do not break a run).
		j := i + 1
		if preps[i].done || preps[i].tool.ReadOnly {
			for j < len(preps) && (preps[j].done || preps[j].tool.ReadOnly) {
				j++
			}
		}
		o.runGroup(ctx, preps[i:j], results[i:j], eo)
		for k := i; k < j; k++ {
			endCall(&preps[k], &results[k], o.spanContent(&preps[k], &results[k], eo))
		}
		i = j
	}
	o.audit(preps, results, eo)
	return results
}

func (o *Orchestrator) prepare(c ToolCall, res *ToolResult) prepared {
	p := prepared{call: c}
	t, ok := o.reg.Lookup(c.Tool)
	if !ok {
		text := fmt.Sprintf("no such tool: %q", c.Tool)
		if o.opts.WhyMissing != nil {
			if why := o.opts.WhyMissing(c.Tool); why != "" {
				text += ": " + why
			}
		}
		*res = errorResult(c.CallID, DecisionInvalid, text)
		p.done = true
		return p
	}
	p.tool = t
	if why := audienceRefusal(c, t); why != "" {
		*res = errorResult(c.CallID, DecisionInvalid, why)
		p.done = true
		return p
	}
	args, err := decodeArgs(c.Arguments)
	if err != nil {
		*res = errorResult(c.CallID, DecisionInvalid, fmt.Sprintf("invalid arguments for %s: %v", t.ID, err))
		p.done = true
		return p
	}
	hoptrace.Stage(hoptrace.FromRequest, "3 request → arguments decoded")
	v, err := t.compiledValidator()
	if err != nil {
		*res = errorResult(c.CallID, DecisionInvalid, fmt.Sprintf("cannot check arguments for %s: its input schema does not compile: %v", t.ID, err))
		p.done = true
		return p
	}
	if err := v.Validate(args); err != nil {
		stripped, ok := withoutNulls(args)
		if !ok || v.Validate(stripped) != nil {
			*res = errorResult(c.CallID, DecisionInvalid, invalidText(t.ID, err))
			p.done = true
			return p
		}
		args = stripped
	}
	p.args = args
	hoptrace.Stage(hoptrace.FromRequest, "4 request → arguments validated")
	return p
}

// withoutNulls returns args without its null arguments, and whether it had
// any. A null the schema refuses is an argument not given (models, and
// callers following SEP-2243's "null or not provided", write it so): the
// call goes on without it when the rest is valid, and the server sees it
// left out, not a value its schema forbids.
func withoutNulls(args map[string]any) (map[string]any, bool) {
	var out map[string]any
	for k, v := range args {
		if v != nil {
			continue
		}
		if out == nil {
			out = maps.Clone(args)
		}
		delete(out, k)
	}
	return out, out != nil
}

// decodeArgs decodes a call's arguments; absent or null means {}. Numbers
// stay json.Number so that large integers reach the server unchanged.
func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
	}
	if raw[0] != '{' {
		return nil, errors.New("arguments must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("arguments hold more than one JSON value")
	}
	return args, nil
}

func invalidText(id string, err error) string {
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Errors) == 0 {
		return fmt.Sprintf("invalid arguments for %s: %v", id, err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "invalid arguments for %s (%d error", id, len(ve.Errors))
	if len(ve.Errors) > 1 {
		b.WriteByte('s')
	}
	b.WriteString("); the tool was not called:")
	for _, fe := range ve.Errors {
		path := fe.Path
		if path == "" {
			path = "/"
		}
		fmt.Fprintf(&b, "\n- %s: %s", path, fe.Message)
	}
	return b.String()
}

// runGroup gates the calls of one group in order (a prompt at a time), then
// runs the allowed ones: alone, or together when the group is read-only.
func (o *Orchestrator) runGroup(ctx context.Context, preps []prepared, results []ToolResult, eo *ExecOptions) {
	type job struct {
		i int
		d Decision
	}
	var jobs []job
	for i := range preps {
		p := &preps[i]
		if p.done {
			continue
		}
		if ctx.Err() != nil {
			results[i] = errorResult(p.call.CallID, DecisionDenied, fmt.Sprintf("cancelled before %s ran", p.tool.ID))
			continue
		}
		p.gateSpan = p.tr.child(nil, "freecode.permission")
		d, denial := o.gate(ctx, p, eo)
		endGate(p.gateSpan, p, d)
		if d == DecisionDenied {
			results[i] = errorResult(p.call.CallID, DecisionDenied, denial)
			continue
		}
		jobs = append(jobs, job{i, d})
	}
	if len(jobs) == 1 {
		j := jobs[0]
		results[j.i] = o.run(ctx, &preps[j.i], j.d, eo, true)
		return
	}
	var g errgroup.Group
	g.SetLimit(int(o.maxParallel.Load()))
	for _, j := range jobs {
		g.Go(func() error {
			// A failing tool writes its own result; the batch goes on.
			results[j.i] = o.run(ctx, &preps[j.i], j.d, eo, false)
			return nil
		})
	}
	g.Wait()
}

// Sentinel causes that tell a timeout of ours from a cancellation.
var (
	errIdleTimeout = errors.New("tool timeout")
	errHardTimeout = errors.New("tool timeout, extended by progress")
)

// run calls an allowed tool, with its timeout, progress relay, one retry for
// a call whose answer was lost if the tool may be repeated (Retryable), and
// the result cap. alone says that the call runs by itself, not beside
// others of its batch.
func (o *Orchestrator) run(ctx context.Context, p *prepared, d Decision, eo *ExecOptions, alone bool) ToolResult {
	start := time.Now()
	timeout := o.timeoutOf(p.tool)
	// The hard cap (toolTimeout stretched by progress) covers the retry
	// too: a call has one deadline however many attempts it takes.
	hardCtx, cancelHard := context.WithTimeoutCause(ctx, progressExtensions*timeout, errHardTimeout)
	defer cancelHard()
	p, d, ended, release := o.recheck(ctx, hardCtx, p, d, eo, alone)
	defer release()
	if ended != nil {
		ended.DurationMs = time.Since(start).Milliseconds()
		return *ended
	}
	t := p.tool
	out, err := o.callOnce(hardCtx, p, timeout, eo, 1)
	if err != nil && errors.Is(err, ErrConnectionLost) && Retryable(t) && hardCtx.Err() == nil {
		// Safe to repeat: the tool says it changes nothing, or nothing
		// more the second time. The connection waits for its reconnect
		// within the call's own deadline, and the tool must still be what
		// was decided on after it.
		if next, _, ended, rel := o.recheck(ctx, hardCtx, p, d, &ExecOptions{}, alone); ended == nil && next == p && Retryable(next.tool) {
			o.log.Info("retrying a call whose answer was lost", "tool", t.ID, "callId", p.call.CallID, "readOnly", t.ReadOnly, "idempotent", t.Idempotent)
			out, err = o.callOnce(hardCtx, p, timeout, eo, 2)
			if err != nil && errors.Is(err, ErrConnectionLost) {
				err = fmt.Errorf("%w (retried once)", err)
			}
			rel()
		} else {
			rel()
			err = fmt.Errorf("%w (not retried: the server listed the tool anew when it reconnected)", err)
		}
	}
	var r ToolResult
	if err != nil {
		r = errorResult(p.call.CallID, d, o.callErrorText(ctx, t, err, timeout))
		r.OutcomeUnknown = outcomeUnknown(ctx, t, err)
	} else {
		r = ToolResult{
			CallID:            p.call.CallID,
			Content:           out.Result.Content,
			StructuredContent: out.Result.StructuredContent,
			IsError:           out.Result.IsError,
			Decision:          d,
			Task:              out.Task,
		}
		if r.Content == nil {
			r.Content = []mcpsdk.Content{}
		}
		o.capResult(&r)
	}
	r.DurationMs = time.Since(start).Milliseconds()
	return r
}

// callOnce makes attempt n within hardCtx, which carries the call's hard
// cap; the idle timeout is the attempt's own.
func (o *Orchestrator) callOnce(hardCtx context.Context, p *prepared, timeout time.Duration, eo *ExecOptions, n int) (_ Outcome, err error) {
	span := p.tr.startAttempt(n)
	defer func() { endAttempt(span, err) }()
	callCtx, cancel := context.WithCancelCause(hardCtx)
	defer cancel(nil)
	idle := time.AfterFunc(timeout, func() { cancel(errIdleTimeout) })
	defer idle.Stop()
	// A notification can race the result, and a Runner may keep the
	// callback: once the attempt is over, progress is neither relayed (the
	// frontend already has the result) nor allowed to restart the timer.
	var progressMu sync.Mutex
	over := false
	defer func() {
		progressMu.Lock()
		over = true
		progressMu.Unlock()
	}()
	onProgress := func(pr Progress) {
		progressMu.Lock()
		defer progressMu.Unlock()
		if over {
			return
		}
		// Progress proves the tool is alive: restart its timeout. The hard
		// cap of hardCtx still bounds the whole call.
		idle.Reset(timeout)
		if eo.OnProgress != nil {
			eo.OnProgress(p.call.CallID, pr)
		}
	}
	out, err := safeCall(callCtx, p.tool, Call{
		ID: p.call.CallID, Name: p.tool.Name, Args: p.args, OnProgress: onProgress,
		Tasks: eo.Tasks, Asker: eo.Asker, Trace: p.tr.context(span),
	})
	if err == nil && out.Result == nil {
		err = errors.New("no result")
	}
	if err != nil {
		// Report our own timeouts as such, whatever error the caller wrapped.
		if c := context.Cause(callCtx); c == errIdleTimeout || c == errHardTimeout {
			return Outcome{}, c
		}
		return Outcome{}, err
	}
	return out, nil
}

// timeoutOf returns the toolTimeout of t's server, or the default.
func (o *Orchestrator) timeoutOf(t *Tool) time.Duration {
	if d := t.Runner.ToolTimeout(); d > 0 {
		return d
	}
	return o.opts.ToolTimeout
}

// safeCall turns a panicking Runner (a built-in's bug) into an error, so one
// tool cannot take the sidecar down.
func safeCall(ctx context.Context, t *Tool, call Call) (out Outcome, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = Outcome{}, fmt.Errorf("tool panicked: %v", r)
		}
	}()
	hoptrace.Stage(hoptrace.FromRequest, "6 request → permitted, runner called")
	return t.Runner.CallTool(ctx, call)
}

func (o *Orchestrator) callErrorText(ctx context.Context, t *Tool, err error, timeout time.Duration) string {
	var refused *RefusedError
	switch {
	case errors.Is(err, errIdleTimeout):
		return fmt.Sprintf("%s timed out after %d ms", t.ID, timeout.Milliseconds())
	case errors.Is(err, errHardTimeout):
		return fmt.Sprintf("%s timed out after %d ms (progress extended its %d ms timeout to the limit of %d×)", t.ID, progressExtensions*timeout.Milliseconds(), timeout.Milliseconds(), progressExtensions)
	case ctx.Err() != nil:
		return fmt.Sprintf("%s was cancelled", t.ID)
	case errors.As(err, &refused):
		// Refused before it ran (a sign-in or more access wanted): no
		// "may or may not have run" here.
		return fmt.Sprintf("%s was not run: server %q refused it: %s", t.ID, t.Server, refused.Reason)
	case outcomeUnknown(ctx, t, err):
		return fmt.Sprintf("%s: %s: the call reached server %q and its answer was lost (the connection or the response stream broke), so it may or may not have run; it is neither read-only nor idempotent, so it was not sent again (%v)", t.ID, OutcomeUnknownText, t.Server, err)
	case errors.Is(err, ErrNotConnected):
		return fmt.Sprintf("%s: server %q is not connected (%v)", t.ID, t.Server, err)
	}
	return fmt.Sprintf("%s failed: %v", t.ID, err)
}
