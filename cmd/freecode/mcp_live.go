package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/internal/termtext"
)

// The live commands, `freecode mcp status|start|stop|restart|logs`, talk to
// the sidecar that serve.json names, as one more of its socket frontends:
// they have the listener prove it holds the file's token, then present
// it, use the protocol's requests, and leave without shutdown, so the
// sidecar and its other frontends go on as they were.

// newMCPLiveCmds returns the live commands but start, which is also the
// one-shot check of mcp_start.go.
func newMCPLiveCmds(a *app) []*cobra.Command {
	return []*cobra.Command{newMCPStatusCmd(a), newMCPStopCmd(a, "stop"), newMCPStopCmd(a, "restart"), newMCPLogsCmd(a)}
}

// sidecarConnectTimeout bounds the dial and the first requests: a process
// that accepts and never answers is reported, not waited for.
const sidecarConnectTimeout = 10 * time.Second

// sidecar is a running sidecar the CLI is connected to as a frontend.
type sidecar struct {
	*frontend.Client
	file    protocol.ServeFile
	project *protocol.Project
}

// noSidecarError says why no sidecar serves the CLI's config file.
type noSidecarError struct {
	config, reason string
}

func (e *noSidecarError) Error() string {
	return fmt.Sprintf("no sidecar serves %s: %s", e.config, e.reason)
}
func (e *noSidecarError) Unwrap() error { return frontend.ErrNoSidecar }

// impostorError is the refusal of a listener at serve.json's address that
// could not prove it holds the file's token: the sidecar the file names is
// gone (killed outright, its file left behind) and some other program,
// maybe another user's, took its address. The CLI sent it nothing but
// the challenge, and shows nothing it said.
type impostorError struct {
	path string
	file protocol.ServeFile
}

func (e *impostorError) Error() string {
	return fmt.Sprintf("refusing the listener at %s: it is not the sidecar %s names (pid %d), since it cannot prove it holds that file's token; "+
		"the sidecar may have been killed and another program taken its address. The token was not sent. "+
		"Remove %s, or start the sidecar again.", e.file.Address, e.path, e.file.PID, e.path)
}

// connectSidecar connects to the sidecar serve.json names and initializes
// the connection, with no workspace folder, so that the CLI adds no MCP
// root while it is connected. A sidecar that serves another config file
// than the CLI's (--config, FREECODE_CONFIG) does not count: its servers
// are not the ones the command names. serve.json is where the sidecar
// keeps it: ~/.freecode/serve.json, whatever config it serves. The error
// is a *noSidecarError when none runs for this config, an *impostorError
// when what listens at the file's address is not the sidecar.
func (a *app) connectSidecar(ctx context.Context, opts *frontend.Options) (*sidecar, error) {
	cfgPath, err := a.path()
	if err != nil {
		return nil, err
	}
	path, err := protocol.DefaultServeFilePath()
	if err != nil {
		return nil, fmt.Errorf("locating serve.json: %w", err)
	}
	sf, err := protocol.ReadServeFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &noSidecarError{cfgPath, fmt.Sprintf("there is no %s", path)}
	case err != nil:
		return nil, &noSidecarError{cfgPath, fmt.Sprintf("%s does not read: %v", path, err)}
	}
	o := frontend.Options{}
	if opts != nil {
		o = *opts
	}
	o.ClientName, o.Token, o.Folders, o.ConfigPath = "freecode-cli", sf.Token, nil, ""
	cctx, cancel := context.WithTimeout(ctx, sidecarConnectTimeout)
	defer cancel()
	c, err := frontend.Dial(cctx, sf.Address, &o)
	if errors.Is(err, frontend.ErrNoSidecar) {
		return nil, &noSidecarError{cfgPath, fmt.Sprintf("%s names pid %d at %s, which does not answer (a sidecar that was killed leaves it behind)", path, sf.PID, sf.Address)}
	}
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*sidecar, error) {
		c.Close()
		if cctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("no answer within %v", sidecarConnectTimeout)
		}
		return nil, fmt.Errorf("the sidecar at %s (pid %d): %w", sf.Address, sf.PID, err)
	}
	if _, err := c.Initialize(cctx); err != nil {
		if errors.Is(err, frontend.ErrNotSidecar) {
			c.Close()
			return nil, &impostorError{path: path, file: sf}
		}
		return fail(err)
	}
	proj, err := c.Project(cctx)
	if err != nil {
		return fail(err)
	}
	if !sameFile(cfgPath, proj.ConfigPath) {
		c.Close()
		return nil, &noSidecarError{cfgPath, fmt.Sprintf("the one %s names (pid %d) serves %s", path, sf.PID, proj.ConfigPath)}
	}
	return &sidecar{Client: c, file: sf, project: proj}, nil
}

// sameFile reports whether two paths name the same file: the same file if
// both exist, the same absolute path if not.
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	return errA == nil && errB == nil && absA == absB
}

// describe is the sidecar in one line, for the head of a command's output.
func (sc *sidecar) describe() string {
	s := fmt.Sprintf("Sidecar pid %d at %s", sc.file.PID, sc.file.Address)
	if sc.project.Root != "" {
		s += ", project " + sc.project.Root
	}
	return termtext.Escape(s)
}

// startHint says how to get a sidecar, for a command that found none.
func startHint() string {
	sock := "unix:$HOME/.freecode/serve.sock"
	if path, err := protocol.DefaultServeFilePath(); err == nil {
		sock = "unix:" + filepath.Join(filepath.Dir(path), "serve.sock")
	}
	return "Start one with `freecode serve --listen " + sock + "` (an editor runs its own over stdio, which the CLI cannot reach)."
}

// explain makes an error of the sidecar's read as the CLI's: an
// unknown server lists the ones there are.
func (sc *sidecar) explain(ctx context.Context, err error) error {
	var je *jsonrpc2.Error
	if errors.As(err, &je) && je.Code == protocol.CodeNoSuchServer {
		if sts, lerr := sc.Servers(ctx); lerr == nil {
			if len(sts) == 0 {
				return fmt.Errorf("%s; the sidecar runs no server", termtext.Escape(je.Message))
			}
			return fmt.Errorf("%s; the sidecar has: %s", termtext.Escape(je.Message), listNames(sts))
		}
	}
	if errors.As(err, &je) {
		return fmt.Errorf("the sidecar: %s", termtext.EscapeLines(je.Message))
	}
	return fmt.Errorf("the sidecar: %w", err)
}

// sidecarOp runs start, stop or restart of a server in the sidecar and
// prints the status that follows. A server that did not come up from
// start or restart is exit status 1, as the one-shot check's is.
func (a *app) sidecarOp(cmd *cobra.Command, sc *sidecar, verb, name string, asJSON bool) error {
	ctx, stop := signalContext(cmd)
	defer stop()
	op := map[string]func(context.Context, string) (*protocol.ServerStatus, error){
		"start": sc.StartServer, "stop": sc.StopServer, "restart": sc.RestartServer,
	}[verb]
	st, err := op(ctx, name)
	if err != nil {
		return sc.explain(ctx, err)
	}
	out := cmd.OutOrStdout()
	up := verb == "stop" || st.State == protocol.StateConnected
	if asJSON {
		if err := writeJSON(out, st); err != nil {
			return err
		}
	} else {
		done := map[string]string{"start": "Started", "stop": "Stopped", "restart": "Restarted"}[verb]
		if !up {
			done = "Could not " + verb
		}
		fmt.Fprintf(out, "%s %q in the sidecar (pid %d).\n", done, name, sc.file.PID)
		printStatus(out, st, time.Now(), statusTailLines)
	}
	if !up {
		return exitError(1)
	}
	return nil
}

// writeJSON prints v as indented JSON, with what a terminal would act on
// escaped (the text is a server's).
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(termtext.JSON(b), '\n'))
	return err
}

// convert converts each value of a list to the wire (server/wire), as
// the sidecar does: what --json prints is the protocol's shape. A nil list
// stays nil.
func convert[D, W any](list []D, f func(D) W) []W {
	if list == nil {
		return nil
	}
	out := make([]W, 0, len(list))
	for _, v := range list {
		out = append(out, f(v))
	}
	return out
}

// newMCPStopCmd is `freecode mcp stop` or `freecode mcp restart`, which
// only a running sidecar can do: a one-shot command's servers stop with it.
func newMCPStopCmd(a *app, verb string) *cobra.Command {
	var asJSON bool
	short := map[string]string{
		"stop":    "Stop a server in the running sidecar",
		"restart": "Restart a server in the running sidecar and wait until it is connected or failed",
	}[verb]
	cmd := &cobra.Command{
		Use:   verb + " <name>",
		Short: short,
		Long: short + ` (freecode serve --listen; found
through ~/.freecode/serve.json, for the same config file), and print its status.
Without a sidecar there is nothing to ` + verb + `: the CLI's other commands stop the
servers they start when they end.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signalContext(cmd)
			defer stop()
			sc, err := a.connectSidecar(ctx, nil)
			var none *noSidecarError
			if errors.As(err, &none) {
				return fmt.Errorf("%w\nso nothing runs %q to %s. %s", err, args[0], verb, startHint())
			}
			if err != nil {
				return err
			}
			defer sc.Close()
			return a.sidecarOp(cmd, sc, verb, args[0], asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's status as a ServerStatus JSON object")
	return cmd
}

// startInSidecar is `freecode mcp start` when a sidecar runs for the
// config: the server is started there. It reports false, doing nothing,
// when none runs.
func (a *app) startInSidecar(cmd *cobra.Command, name string, asJSON bool) (bool, error) {
	ctx, stop := signalContext(cmd)
	defer stop()
	sc, err := a.connectSidecar(ctx, nil)
	var none *noSidecarError
	if errors.As(err, &none) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("%w (--local checks the server from here instead)", err)
	}
	defer sc.Close()
	return true, a.sidecarOp(cmd, sc, "start", name, asJSON)
}

// findStatus returns the status of name among sts, or an error that lists
// the servers there are.
func findStatus(sts []protocol.ServerStatus, name, where string) (*protocol.ServerStatus, error) {
	i := slices.IndexFunc(sts, func(st protocol.ServerStatus) bool { return st.Name == name })
	if i >= 0 {
		return &sts[i], nil
	}
	if len(sts) == 0 {
		return nil, fmt.Errorf("no server named %q: %s has none", name, where)
	}
	return nil, fmt.Errorf("no server named %q in %s; it has: %s", name, where, listNames(sts))
}

// listNames lists the servers' names, escaped, for an error.
func listNames(sts []protocol.ServerStatus) string {
	names := make([]string, len(sts))
	for i, st := range sts {
		names[i] = st.Name
	}
	return termtext.Escape(strings.Join(names, ", "))
}
