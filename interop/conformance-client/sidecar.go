package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	lsp "go.lsp.dev/protocol"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
)

// The sidecar driver: the scenario played by a frontend of `freecode serve
// --stdio` (the sidecar) over its frontend protocol, as an editor plays
// it. The server is added with `freecode mcp add`, as its user would; the
// frontend signs in (freecode/servers/login, the page opened through
// window/showDocument by loading it, as a user who consents at once),
// lists and calls tools (freecode/tools/execute, each call allowed when
// asked) and answers what the server asks during a call
// (freecode/elicitation/request) as the CLI driver's user does: every
// default taken, yes to a yes-or-no question without one.

// sidecar is a frontend attached to a sidecar it started.
type sidecar struct {
	fc    *frontend.Client
	calls atomic.Int64
}

// runSidecar drives scenario against serverURL through the sidecar.
func runSidecar(ctx context.Context, serverURL, scenario string, stderr io.Writer) error {
	c, sc, done, err := prepare(ctx, serverURL, scenario, stderr, "freecode-conformance-sidecar")
	if err != nil {
		return err
	}
	defer done()
	dir, stderr := filepath.Dir(c.config), c.stderr

	cmd := exec.Command(c.bin, "--config", c.config, "serve", "--stdio")
	cmd.Env, cmd.Dir, cmd.Stderr = c.env, dir, stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the sidecar: %w", err)
	}
	s := &sidecar{}
	s.fc = frontend.New(pipes{stdout, stdin}, &frontend.Options{
		ClientName: "freecode-conformance",
		Folders:    []string{dir},
		ConfigPath: c.config,
		OnPermission: func(context.Context, *protocol.PermissionRequest) (*protocol.PermissionResponse, error) {
			return &protocol.PermissionResponse{Decision: protocol.AllowOnce}, nil
		},
		OnElicitation: answerForm,
		OnShowDocument: func(_ context.Context, p *lsp.ShowDocumentParams) (*lsp.ShowDocumentResult, error) {
			if err := browse(string(p.URI)); err != nil {
				fmt.Fprintln(stderr, "conformance-client: opening the sign-in page:", err)
			}
			return &lsp.ShowDocumentResult{Success: true}, nil
		},
	})
	err = s.drive(ctx, scenario, sc)
	// The sidecar stops every server and exits on shutdown and exit.
	if serr := s.fc.Shutdown(ctx); serr == nil {
		s.fc.Exit(ctx)
	}
	s.fc.Close()
	return errors.Join(err, cmd.Wait())
}

func (s *sidecar) drive(ctx context.Context, scenario string, sc suiteContext) error {
	if _, err := s.fc.Initialize(ctx); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	var (
		st  *protocol.ServerStatus
		err error
	)
	if isAuth(scenario) {
		st, err = s.fc.Login(ctx, serverName)
	} else {
		st, err = s.fc.StartServer(ctx, serverName)
	}
	if err != nil {
		return err
	}
	// A first attempt that failed is retried: an editor waits for the
	// server's status to settle, as this does.
	for st.State == protocol.StateConnecting || st.State == protocol.StateReconnecting {
		select {
		case <-ctx.Done():
			return fmt.Errorf("the server is still %s: %s", st.State, st.LastError)
		case <-time.After(100 * time.Millisecond):
		}
		all, err := s.fc.Servers(ctx)
		if err != nil {
			return err
		}
		for i := range all {
			if all[i].Name == serverName {
				st = &all[i]
			}
		}
	}
	if st.State != protocol.StateConnected {
		return fmt.Errorf("the server is %s: %s", st.State, st.LastError)
	}
	return play(ctx, s, scenario, sc)
}

func (s *sidecar) tools(ctx context.Context) ([]string, error) {
	tools, err := s.fc.Tools(ctx, serverName)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names, nil
}

func (s *sidecar) call(ctx context.Context, tool string, args map[string]any) error {
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	id := "call-" + strconv.FormatInt(s.calls.Add(1), 10)
	rs, err := s.fc.Execute(ctx, protocol.ToolCall{CallID: id, Tool: "mcp__" + serverName + "__" + tool, Arguments: b})
	if err != nil {
		return err
	}
	if len(rs) != 1 {
		return fmt.Errorf("%d results for one call", len(rs))
	}
	if rs[0].IsError {
		return fmt.Errorf("%s: the result is an error: %s", tool, rs[0].Content)
	}
	return nil
}

func (s *sidecar) resources(ctx context.Context) ([]string, error) {
	rs, err := s.fc.Resources(ctx, serverName)
	if err != nil {
		return nil, err
	}
	uris := make([]string, len(rs))
	for i, r := range rs {
		uris[i] = r.URI
	}
	return uris, nil
}

func (s *sidecar) read(ctx context.Context, uri string) error {
	_, err := s.fc.ReadResource(ctx, serverName, uri)
	return err
}

func (s *sidecar) prompts(ctx context.Context) ([]string, error) {
	ps, err := s.fc.Prompts(ctx, serverName)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return names, nil
}

func (s *sidecar) prompt(ctx context.Context, name string) error {
	_, err := s.fc.GetPrompt(ctx, serverName, name, nil)
	return err
}

// answerForm accepts a form as the CLI driver's user fills it in: the
// sidecar fills in the defaults left out, a yes-or-no field without one
// is yes, a required text field without one says "conformance". A URL is
// opened.
func answerForm(_ context.Context, req *protocol.ElicitationRequest) (*protocol.ElicitationResponse, error) {
	if req.Mode == protocol.ElicitURL {
		if err := browse(req.URL); err != nil {
			return &protocol.ElicitationResponse{Action: protocol.ElicitCancel}, nil
		}
		return &protocol.ElicitationResponse{Action: protocol.ElicitAccept}, nil
	}
	var schema struct {
		Properties map[string]struct {
			Type    string          `json:"type"`
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if len(req.RequestedSchema) > 0 {
		if err := json.Unmarshal(req.RequestedSchema, &schema); err != nil {
			return &protocol.ElicitationResponse{Action: protocol.ElicitDecline}, nil
		}
	}
	content := map[string]any{}
	for name, p := range schema.Properties {
		if p.Default != nil {
			continue
		}
		switch {
		case p.Type == "boolean":
			content[name] = true
		case p.Type == "string" && slices.Contains(schema.Required, name):
			content[name] = "conformance"
		}
	}
	return &protocol.ElicitationResponse{Action: protocol.ElicitAccept, Content: content}, nil
}

// pipes is the sidecar's stdout and stdin as one connection.
type pipes struct {
	io.ReadCloser
	io.WriteCloser
}

// Close closes both ends: the sidecar reads EOF, and reading ends.
func (p pipes) Close() error {
	return errors.Join(p.WriteCloser.Close(), p.ReadCloser.Close())
}
