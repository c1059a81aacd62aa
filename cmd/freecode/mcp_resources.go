package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/freecode/freecode/internal/termtext"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/server/wire"
	"github.com/freecode/freecode/workspace"
)

// `freecode mcp resources` and `freecode mcp prompts`: what a server offers
// beside its tools, listed, read and got the way the sidecar does it. All
// the server wrote is escaped before it reaches the terminal.

func newMCPResourcesCmd(a *app) *cobra.Command {
	var read, project string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "resources <server> [--read URI]",
		Short: "List a server's resources, or read one",
		Long: `Connect the server and list its resources (every page of resources/list): URI,
name, MIME type and description. With --read, read one resource and print its
text (binary contents are described by type and size; --json prints the whole
result).`,
		Example: `  freecode mcp resources everything
  freecode mcp resources everything --read demo://resource/static/document/architecture.md`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withServer(cmd, project, args[0], func(ctx context.Context, w *workspace.Workspace, asker orchestrator.Asker) error {
				out := cmd.OutOrStdout()
				if read != "" {
					res, err := w.ReadResource(ctx, args[0], read, asker)
					if err != nil {
						return err
					}
					if asJSON {
						return printJSON(out, res)
					}
					for _, c := range res.Contents {
						printResourceContents(out, c)
					}
					return nil
				}
				list, err := w.Resources(ctx, args[0])
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(out, convert(list, wire.ResourceInfo))
				}
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				for _, r := range list {
					name := r.Name
					if r.Title != "" {
						name += " (" + r.Title + ")"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", termtext.Escape(r.URI), termtext.Escape(name), orDash(termtext.Escape(r.MIMEType)), firstLine(r.Description, 60))
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%d %s\n", len(list), plural(len(list), "resource", "resources"))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&read, "read", "", "read the resource of this URI")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: the resources, or the whole resources/read result")
	cmd.Flags().StringVar(&project, "project", "", "project directory for project servers (default: the current directory)")
	return cmd
}

func newMCPPromptsCmd(a *app) *cobra.Command {
	var get, argsFlag, project string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "prompts <server> [--get NAME [--args '<json>']]",
		Short: "List a server's prompts, or get one",
		Long: `Connect the server and list its prompts: name, title, arguments (* marks a
required one) and description. With --get, get one prompt with --args, a JSON
object of strings, and print its messages.`,
		Example: `  freecode mcp prompts everything
  freecode mcp prompts everything --get args-prompt --args '{"city":"Paris"}'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var promptArgs map[string]string
			if argsFlag != "" {
				if get == "" {
					return fmt.Errorf("--args goes with --get")
				}
				if err := json.Unmarshal([]byte(argsFlag), &promptArgs); err != nil {
					return fmt.Errorf("--args must be a JSON object of strings: %v", err)
				}
			}
			return a.withServer(cmd, project, args[0], func(ctx context.Context, w *workspace.Workspace, asker orchestrator.Asker) error {
				out := cmd.OutOrStdout()
				if get != "" {
					res, err := w.GetPrompt(ctx, args[0], get, promptArgs, asker)
					if err != nil {
						return err
					}
					if asJSON {
						return printJSON(out, res)
					}
					if res.Description != "" {
						fmt.Fprintf(out, "# %s\n", termtext.Escape(res.Description))
					}
					for _, m := range res.Messages {
						fmt.Fprintf(out, "%s: %s\n", termtext.Escape(string(m.Role)), contentText(m.Content))
					}
					return nil
				}
				list, err := w.Prompts(ctx, args[0])
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(out, convert(list, wire.PromptInfo))
				}
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				for _, p := range list {
					var as []string
					for _, arg := range p.Arguments {
						s := arg.Name
						if arg.Required {
							s += "*"
						}
						as = append(as, s)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", termtext.Escape(p.Name), orDash(termtext.Escape(p.Title)), orDash(termtext.Escape(strings.Join(as, ", "))), firstLine(p.Description, 60))
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%d %s\n", len(list), plural(len(list), "prompt", "prompts"))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&get, "get", "", "get the prompt of this name")
	cmd.Flags().StringVar(&argsFlag, "args", "", `the prompt's arguments, a JSON object of strings: '{"city":"Paris"}'`)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: the prompts, or the whole prompts/get result")
	cmd.Flags().StringVar(&project, "project", "", "project directory for project servers (default: the current directory)")
	return cmd
}

// withServer connects the one server name and runs fn on the workspace,
// with the Asker of its requests, the terminal (if any) answering the
// server's questions. A server that does not connect is an error naming
// why.
func (a *app) withServer(cmd *cobra.Command, project, name string, fn func(context.Context, *workspace.Workspace, orchestrator.Asker) error) error {
	ctx, stop := signalContext(cmd)
	defer stop()
	var in *bufio.Reader
	if isTerminal(cmd.InOrStdin()) {
		in = bufio.NewReader(cmd.InOrStdin())
	}
	r, err := a.openTools(ctx, project, func(s string) bool { return s == name }, false, func(o *workspace.Options) {
		o.Elicitation = in != nil
	})
	if err != nil {
		return err
	}
	defer r.w.Close()
	r.reportProblems(cmd.ErrOrStderr())
	if len(r.started) == 0 {
		for _, p := range r.pending {
			if p == name {
				return fmt.Errorf("project server %q awaits your approval: see `freecode mcp approve --project %s`", name, r.projectDir)
			}
		}
		return fmt.Errorf("no enabled server named %q", name)
	}
	if r.reportFailures(cmd.ErrOrStderr()) > 0 {
		return exitError(1)
	}
	return fn(ctx, r.w, newCLIAsker(in, cmd.ErrOrStderr()))
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printResourceContents prints one content of a resource: its text, or
// what its blob is.
func printResourceContents(w io.Writer, c *mcpsdk.ResourceContents) {
	if c == nil {
		return
	}
	if c.Blob != nil || c.Text == "" && c.MIMEType != "" && !strings.HasPrefix(c.MIMEType, "text/") {
		fmt.Fprintf(w, "[%s: %s, %d bytes]\n", termtext.Escape(c.URI), orDash(termtext.Escape(c.MIMEType)), len(c.Blob))
		return
	}
	fmt.Fprintln(w, termtext.EscapeLines(c.Text))
}

// contentText is one message content as a line: text as it is (escaped),
// anything else described.
func contentText(c mcpsdk.Content) string {
	switch c := c.(type) {
	case *mcpsdk.TextContent:
		return termtext.EscapeLines(c.Text)
	case *mcpsdk.ImageContent:
		return fmt.Sprintf("[image %s, %d bytes]", termtext.Escape(c.MIMEType), len(c.Data))
	case *mcpsdk.AudioContent:
		return fmt.Sprintf("[audio %s, %d bytes]", termtext.Escape(c.MIMEType), len(c.Data))
	case *mcpsdk.EmbeddedResource:
		if c.Resource != nil {
			if c.Resource.Text != "" {
				return fmt.Sprintf("[resource %s]\n%s", termtext.Escape(c.Resource.URI), termtext.EscapeLines(c.Resource.Text))
			}
			return fmt.Sprintf("[resource %s, %d bytes]", termtext.Escape(c.Resource.URI), len(c.Resource.Blob))
		}
	case *mcpsdk.ResourceLink:
		return fmt.Sprintf("[resource link %s]", termtext.Escape(c.URI))
	}
	b, _ := json.Marshal(c)
	return string(termtext.JSON(b))
}
