package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/freecode/freecode/internal/termtext"
	"github.com/freecode/freecode/internal/toolid"
	"github.com/freecode/freecode/mcp/oauth"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/server/wire"
	"github.com/freecode/freecode/telemetry"
	"github.com/freecode/freecode/workspace"
)

func newToolsCallCmd(a *app, project *string) *cobra.Command {
	var argsFlag string
	var yes, asJSON bool
	cmd := &cobra.Command{
		Use:   "call <tool-id> [--args '<json>' | --args @file | --args -]",
		Short: "Run one tool call through the orchestrator",
		Long: `Run one tool call the way the sidecar does: the arguments are validated against
the tool's schema, the permission rules of ~/.freecode/settings.json and the
project's files apply, and the server's toolTimeout bounds the call.

The arguments are a JSON object: given on the command line, read from a file
(--args @file) or from standard input (--args -), for arguments larger than
the system lets a command line be.

When a rule asks for permission, a terminal gets a y/N/always prompt; without a
terminal the call is denied (the message names the rule to add) unless --yes
allows it once. With --args - standard input holds the arguments, so there is
no terminal to ask. Exit status 1 when the result is an error.

A server that asks something during the call (an MCP elicitation: a form or a
URL to open) is answered on the terminal, field by field, the form's defaults
offered; without a terminal it is declined. A server's sampling request is
refused: the command line has no model of its own.

A server that runs the call as a task (the MCP tasks extension) has it waited
for until the task ends, however long it lives, each change of its status shown
on standard error; Ctrl-C cancels the task on its server (tasks/cancel) and
exits with status 1.

A remote server that asks for more access than its sign-in gave (HTTP 403
insufficient_scope) gets a sign-in for it in the browser, as ` + "`freecode mcp login`" + `
signs in, when there is a terminal or $BROWSER; the call then runs. Otherwise
the call is not run, and the result names the scope the server asks for.`,
		Example: `  freecode tools call mcp__demo__read_file --args '{"path":"README.md"}'
  freecode tools call mcp__demo__delete_file --args '{"path":"old.txt"}' --yes
  freecode tools call mcp__demo__echo --args @big.json
  generate-args | freecode tools call mcp__demo__echo --args -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			argsJSON, err := readArgs(argsFlag, cmd.InOrStdin())
			if err != nil {
				return err
			}
			ctx, stop := signalContext(cmd)
			defer stop()
			// A terminal answers the servers' questions (tools_elicit.go).
			var in *bufio.Reader
			if argsFlag != "-" && isTerminal(cmd.InOrStdin()) {
				in = bufio.NewReader(cmd.InOrStdin())
			}
			// A server that asks for more access than its sign-in gave
			// (403 insufficient_scope) gets a sign-in for it in the
			// middle of the call when someone can answer: the call's
			// Asker shows it, and the workspace's opener what no call
			// asks.
			stderr := cmd.ErrOrStderr()
			asker := newCLIAsker(in, stderr)
			srv, _ := toolid.ServerOf(id)
			var stepUp oauth.OpenURLFunc = asker.SignInOpener(srv)
			// Flushed after the workspace closed (defers run last first).
			path, err := a.path()
			if err != nil {
				return err
			}
			tel, stopTelemetry := telemetry.StartProcess(ctx, os.Getenv, &telemetry.Options{Logger: warnLogger(stderr), ConfigPath: path})
			defer stopTelemetry()
			r, err := a.openTools(ctx, *project, serverOf(id), true, func(o *workspace.Options) {
				o.Elicitation = in != nil
				o.OpenURL = stepUp
				o.TracerProvider, o.MeterProvider = tel.Recording()
				o.OnCallEvent = tel.CallEvents
				o.TelemetryArguments = tel.Arguments
			})
			if err != nil {
				return err
			}
			defer r.w.Close()
			r.reportProblems(stderr)
			r.reportFailures(stderr)

			var approver orchestrator.Approver
			switch {
			case yes:
				approver = orchestrator.ApproverFunc(func(context.Context, orchestrator.Request) (orchestrator.Answer, error) {
					return orchestrator.Answer{Decision: orchestrator.AllowOnce}, nil
				})
			case in != nil:
				approver = &promptApprover{in: in, out: stderr}
			}
			rs := r.w.Execute(ctx, []orchestrator.ToolCall{{CallID: "cli-1", Tool: id, Arguments: argsJSON}}, &orchestrator.ExecOptions{
				Approver: approver,
				OnProgress: func(_ string, p orchestrator.Progress) {
					fmt.Fprintf(stderr, "progress: %s\n", termtext.Escape(progressText(p)))
				},
				OnWarning: func(_ string, msg string) {
					fmt.Fprintf(stderr, "warning: %s\n", termtext.Escape(msg))
				},
				Asker:    asker,
				Frontend: "cli",
				// A call its server runs as a task is waited for here, for
				// as long as the task lives (tools_task.go).
				Tasks: orchestrator.TasksReturned,
			})
			res := rs[0]
			if res.Task != nil {
				res = awaitTask(ctx, r.w, res, asker, stderr)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				wr, err := wire.ToolResult(res)
				if err != nil {
					return err
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(wr); err != nil {
					return err
				}
			} else {
				printResult(out, &res)
			}
			if res.IsError && stepUp == nil && strings.Contains(res.Text(), oauth.ErrNeedsAuth.Error()) {
				fmt.Fprintf(stderr, "To grant it, run the call again from a terminal or with $BROWSER set: FreeCode then asks you to sign in\n"+
					"for that access in the browser, as `freecode mcp login %[1]s` does. Or list the scopes in the server's\n"+
					"\"oauth\": {\"scopes\": [...]} and run `freecode mcp login %[1]s`.\n", srv)
			}
			if res.IsError {
				return exitError(1)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&argsFlag, "args", "{}", "the call's arguments: a JSON object, @file to read it from a file, - to read it from standard input")
	cmd.Flags().BoolVar(&yes, "yes", false, "allow the call once if a rule would ask")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole ToolResult as JSON")
	return cmd
}

// maxArgsBytes bounds arguments read from a file or standard input: far
// beyond any command line, and beyond what a server takes in one message
// by default, but not unbounded (--args @/dev/zero).
const maxArgsBytes = 64 << 20

// readArgs returns the JSON of --args: the flag's value itself, the
// contents of the file it names after "@", or standard input for "-".
// A JSON value never starts with "@" or is "-", so neither form hides one.
func readArgs(flag string, stdin io.Reader) (json.RawMessage, error) {
	var data []byte
	var from string
	switch {
	case flag == "-":
		from = "standard input"
		b, err := io.ReadAll(io.LimitReader(stdin, maxArgsBytes+1))
		if err != nil {
			return nil, fmt.Errorf("reading --args from %s: %w", from, err)
		}
		data = b
	case strings.HasPrefix(flag, "@"):
		from = flag[1:]
		f, err := os.Open(from)
		if err != nil {
			return nil, fmt.Errorf("reading --args: %w", err)
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxArgsBytes+1))
		if err != nil {
			return nil, fmt.Errorf("reading --args from %s: %w", from, err)
		}
		data = b
	default:
		if !json.Valid([]byte(flag)) {
			return nil, fmt.Errorf("--args is not valid JSON: %s", flag)
		}
		return json.RawMessage(flag), nil
	}
	if len(data) > maxArgsBytes {
		return nil, fmt.Errorf("--args from %s: more than %d MiB", from, maxArgsBytes>>20)
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("--args from %s is not valid JSON", from)
	}
	return json.RawMessage(data), nil
}

func progressText(p orchestrator.Progress) string {
	s := fmt.Sprint(p.Progress)
	if p.Total > 0 {
		s += "/" + fmt.Sprint(p.Total)
	}
	if p.Message != "" {
		s += " " + p.Message
	}
	return s
}

// printResult prints a result for a person: text as it is, other content
// described in one line, structured content as JSON when there is no text.
func printResult(w io.Writer, r *orchestrator.ToolResult) {
	if r.IsError {
		fmt.Fprintf(w, "✗ error (%s, %d ms):\n", r.Decision, r.DurationMs)
	}
	hasText := false
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcpsdk.TextContent:
			hasText = true
			fmt.Fprintln(w, termtext.EscapeLines(c.Text))
		case *mcpsdk.ImageContent:
			fmt.Fprintf(w, "[image %s, %d bytes]\n", termtext.Escape(c.MIMEType), len(c.Data))
		case *mcpsdk.AudioContent:
			fmt.Fprintf(w, "[audio %s, %d bytes]\n", termtext.Escape(c.MIMEType), len(c.Data))
		case *mcpsdk.ResourceLink:
			fmt.Fprintf(w, "[resource link %s]\n", termtext.Escape(c.URI))
		case *mcpsdk.EmbeddedResource:
			if c.Resource != nil {
				fmt.Fprintf(w, "[resource %s]\n", termtext.Escape(c.Resource.URI))
			}
		default:
			b, _ := json.Marshal(c)
			fmt.Fprintf(w, "%s\n", termtext.JSON(b))
		}
	}
	if r.StructuredContent != nil && !hasText {
		b, err := json.MarshalIndent(r.StructuredContent, "", "  ")
		if err == nil {
			fmt.Fprintf(w, "%s\n", termtext.JSON(b))
		}
	}
}
