package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/internal/termtext"
	"github.com/freecode/freecode/mcp/oauth"
	"github.com/freecode/freecode/server"
)

func init() { subcommands = append(subcommands, newWebCmd) }

// webStartTimeout bounds how long `freecode web` waits for the sidecar it
// started to listen: its workspace opens first, which reads the config.
const webStartTimeout = 30 * time.Second

func newWebCmd(a *app) *cobra.Command {
	var (
		project   string
		noBrowser bool
		stop      bool
		port      int
		origins   []string
	)
	cmd := &cobra.Command{
		Use:   "web",
		Short: "Open the FreeCode MCP page in the browser, served by a sidecar for this project",
		Long: `Open the FreeCode MCP page: the servers with their live state, their tools,
the permission prompts of the calls made from it, resources, prompts and logs.

The page is served by a sidecar listening on ws://127.0.0.1:PORT. When
~/.freecode/serve.json names one for this project and config, it is reused;
with none, one is started in the background (` + "`freecode serve --listen ws://127.0.0.1:PORT`" + `,
its log in ~/.freecode/web.log), and it runs until a frontend sends it
shutdown or it is signalled. Either way the sidecar is asked, with the token
of serve.json, for a one-time sign-in code. It is written into a file only
you can read (~/.freecode/web/signin-….html), which sends it on to the page,
and the browser is started with that file's path ($BROWSER, else the
system's opener): a command line is every local user's to read, so the code
is never on one. The code works once and for 5 minutes; it sets a session
cookie for this sidecar's port, and the file is removed once it is used.

It keeps running once the page is closed: ` + "`freecode web --stop`" + ` asks it to shut down
(its servers stopped, the page's connections closed).

With --no-browser the sign-in link (http://127.0.0.1:PORT/?code=…) is printed
to this terminal instead, for you to open, here or through a forwarded port:
whoever sees it can sign in with it until it is used. A browser that cannot
read ~/.freecode (one packaged as a snap or flatpak) needs --no-browser.`,
		Example: `  freecode web
  freecode web --no-browser
  freecode web --project ~/src/app --port 8765
  freecode web --stop`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := signalContext(cmd)
			defer cancel()
			if stop {
				return a.stopWebSidecar(ctx, cmd.OutOrStdout())
			}
			root, err := projectRoot(project)
			if err != nil {
				return err
			}
			sc, err := a.webSidecar(ctx, cmd.ErrOrStderr(), root, port, origins)
			if err != nil {
				return err
			}
			defer sc.Close()
			var res protocol.WebCodeResult
			if err := sc.Call(ctx, protocol.MethodWebCode, struct{}{}, &res); err != nil {
				return fmt.Errorf("asking the sidecar at %s for a sign-in link: %w", sc.file.Address, err)
			}
			out := cmd.OutOrStdout()
			if noBrowser {
				fmt.Fprintf(out, "%s\nOpen this link (once, before %s) to sign in to the FreeCode MCP page:\n%s\n", sc.describe(), res.ExpiresAt, res.URL)
				fmt.Fprintf(out, "The sidecar keeps running; stop it with: %s\n", a.webStopCommand())
				return nil
			}
			dir, err := server.DefaultSignInDir()
			if err != nil {
				return err
			}
			file, err := server.WriteSignInFile(dir, res)
			if err != nil {
				return err
			}
			if err := oauth.OpenBrowserFile(ctx, file); err != nil {
				server.RemoveSignInFile(dir, res.Code)
				fmt.Fprintf(cmd.ErrOrStderr(), "No browser opened (%v).\nOpen this link (once, before %s):\n%s\n", termtext.Escape(err.Error()), res.ExpiresAt, res.URL)
				return exitError(1)
			}
			fmt.Fprintf(out, "%s\nOpened the FreeCode MCP page in the browser (if it cannot read %s, run `freecode web --no-browser`).\n", sc.describe(), file)
			fmt.Fprintf(out, "The sidecar keeps running; stop it with: %s\n", a.webStopCommand())
			return nil
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "project directory (default: the current directory)")
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "print the sign-in link to this terminal instead of opening the page (whoever sees the link can sign in with it, once)")
	cmd.Flags().BoolVar(&stop, "stop", false, "ask the sidecar that serves this config (serve.json names it) to shut down, and wait until it has")
	cmd.Flags().IntVar(&port, "port", 0, "the port of a sidecar started here (default: any free one)")
	cmd.Flags().StringArrayVar(&origins, "allow-origin", nil, "for a sidecar started here: another origin whose pages may connect (repeatable)")
	return cmd
}

// webStopTimeout bounds how long `freecode web --stop` waits for the
// sidecar to be gone: it stops its servers first, each within its grace.
const webStopTimeout = 30 * time.Second

// webStopCommand is the command that stops the sidecar of this config.
func (a *app) webStopCommand() string {
	if a.configPath != "" {
		return "freecode --config " + quoteArgv([]string{a.configPath}) + " web --stop"
	}
	return "freecode web --stop"
}

// stopWebSidecar asks the sidecar serve.json names for this config to shut
// down, as a frontend does (shutdown, then exit), and waits until it is
// gone: until serve.json, which it removes as it ends, no longer names it.
// No sidecar is nothing to stop.
func (a *app) stopWebSidecar(ctx context.Context, out io.Writer) error {
	sc, err := a.connectSidecar(ctx, nil)
	if none := (*noSidecarError)(nil); errors.As(err, &none) {
		fmt.Fprintf(out, "Nothing to stop: %s.\n", termtext.Escape(err.Error()))
		return nil
	}
	if err != nil {
		return err
	}
	desc, pid := sc.describe(), sc.file.PID
	if err := sc.Shutdown(ctx); err != nil {
		sc.Close()
		return fmt.Errorf("asking the sidecar (pid %d) to shut down: %w", pid, err)
	}
	_ = sc.Exit(ctx) // it ends once this connection closes in any case
	sc.Close()
	sfPath, err := protocol.DefaultServeFilePath()
	if err != nil {
		return err
	}
	deadline := time.NewTimer(webStopTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if sf, err := protocol.ReadServeFile(sfPath); err != nil || sf.PID != pid {
			fmt.Fprintf(out, "Stopped: %s.\n", desc)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("the sidecar (pid %d) was asked to shut down and still runs after %v", pid, webStopTimeout)
		case <-tick.C:
		}
	}
}

// projectRoot is the project directory named, or the current one,
// absolute.
func projectRoot(dir string) (string, error) {
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return "", err
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("project %s is not a directory", abs)
	}
	return abs, nil
}

// webSidecar connects to the sidecar that serves the page for root: the
// one serve.json names if it listens on ws: for this project and config,
// else one started here. A sidecar that runs for something else is not
// replaced: there is one serve.json, and its frontends would lose it.
func (a *app) webSidecar(ctx context.Context, stderr io.Writer, root string, port int, origins []string) (*sidecar, error) {
	sc, err := a.connectSidecar(ctx, nil)
	var none *noSidecarError
	switch {
	case errors.As(err, &none):
		return a.startWebSidecar(ctx, stderr, root, port, origins)
	case err != nil:
		return nil, err
	}
	if !strings.HasPrefix(sc.file.Address, "ws://") {
		sc.Close()
		return nil, fmt.Errorf("the running sidecar (pid %d) listens on %s, which a browser cannot reach; stop it (%s), then run `freecode web` again",
			sc.file.PID, sc.file.Address, a.webStopCommand())
	}
	if sc.project.Root != "" && !sameFile(sc.project.Root, root) {
		sc.Close()
		return nil, fmt.Errorf("the running sidecar (pid %d, %s) serves the project %s, not %s; run `freecode web` there, or stop it first",
			sc.file.PID, sc.file.Address, termtext.Escape(sc.project.Root), root)
	}
	return sc, nil
}

// startWebSidecar starts `freecode serve --listen ws://127.0.0.1:PORT` for
// root in the background, detached from this terminal, and connects to it
// once its serve.json names it.
func (a *app) startWebSidecar(ctx context.Context, stderr io.Writer, root string, port int, origins []string) (*sidecar, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cfg, err := a.path()
	if err != nil {
		return nil, err
	}
	sfPath, err := protocol.DefaultServeFilePath()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(filepath.Dir(sfPath), "web.log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	args := []string{"serve", "--listen", fmt.Sprintf("ws://127.0.0.1:%d", port), "--project", root, "--config", cfg, "--log-format", "plain"}
	for _, o := range origins {
		args = append(args, "--allow-origin", o)
	}
	child := exec.Command(exe, args...)
	child.Dir = root
	child.Stdout, child.Stderr = logFile, logFile
	detach(child)
	if err := child.Start(); err != nil {
		return nil, fmt.Errorf("starting the sidecar: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	fmt.Fprintf(stderr, "Started a sidecar for %s (pid %d, its log in %s).\n", root, child.Process.Pid, logPath)
	deadline := time.NewTimer(webStartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return nil, fmt.Errorf("the sidecar exited before it listened (%v); the end of %s:\n%s", err, logPath, logTail(logPath))
		case <-deadline.C:
			return nil, fmt.Errorf("the sidecar (pid %d) did not listen within %v; see %s", child.Process.Pid, webStartTimeout, logPath)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
		if sf, err := protocol.ReadServeFile(sfPath); err != nil || sf.PID != child.Process.Pid {
			continue
		}
		return a.connectSidecar(ctx, nil)
	}
}

// logTail is the last lines of a log, escaped for the terminal.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return termtext.Escape(strings.Join(lines, "\n"))
}
