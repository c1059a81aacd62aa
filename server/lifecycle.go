package server

import (
	"context"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/freecode/freecode/internal/protocol"
)

// initialize takes the frontend's folders and options. Without a token
// that matches, the frontend is refused and its connection closed. With
// stdio, its first folder is the project and its configPath the config;
// the workspace opens at initialized.
func (sess *session) initialize(params jsonrpc2.RawMessage) (any, error) {
	sess.mu.Lock()
	state := sess.state
	sess.mu.Unlock()
	if state != sessionCreated {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "initialize was sent twice")
	}
	var p lsp.InitializeParams
	if err := lsp.Unmarshal(params, &p); err != nil {
		return nil, jsonrpc2.NewError(protocol.CodeInvalidParams, "invalid params: "+err.Error())
	}
	var opts protocol.InitializationOptions
	if len(p.InitializationOptions) > 0 {
		if err := decode(jsonrpc2.RawMessage(p.InitializationOptions), &opts); err != nil {
			return nil, invalidParams("initializationOptions", "%v", err)
		}
	}
	if want := sess.srv.opts.Token; want != "" {
		// A browser's WebSocket that carried the session cookie was
		// authenticated before it could send anything (web.go): it has
		// no token to present.
		if !sess.cookie {
			if err := checkToken(want, opts.Token); err != nil {
				sess.mu.Lock()
				sess.state = sessionRefused
				sess.mu.Unlock()
				sess.logger.Warn("refused a frontend", "error", err)
				// The connection ends once this answer is written (ServeConn).
				return nil, err
			}
		}
		sess.passHandshake()
	}
	folders, err := foldersOf(&p)
	if err != nil {
		return nil, err
	}
	if len(folders) > 0 {
		if fi, err := os.Stat(folders[0]); err != nil || !fi.IsDir() {
			return nil, invalidParams("workspaceFolders[0].uri", "%s is not a directory", folders[0])
		}
	}
	var caps protocol.ClientCapabilities
	if opts.Capabilities != nil {
		caps = *opts.Capabilities
	}
	w := p.Capabilities.Window
	showDoc := w != nil && w.ShowDocument != nil && w.ShowDocument.Support
	sess.mu.Lock()
	sess.state = sessionInitializing
	sess.folders = folders
	if len(folders) > 0 {
		sess.root = folders[0]
	}
	sess.config = opts.ConfigPath
	sess.client = p.ClientInfo.Name
	sess.caps, sess.showDoc, sess.relay = caps, showDoc, sess.newRelay(caps)
	sess.mu.Unlock()
	sess.logger.Info("initialize", "client", p.ClientInfo.Name, "folders", folders,
		"elicitation", caps.Elicitation, "sampling", caps.Sampling, "showDocument", showDoc)
	return &protocol.InitializeResult{
		Capabilities: protocol.ServerCapabilities{
			Experimental: protocol.Experimental{FreeCode: protocol.FreeCodeCapabilities{ProtocolVersion: protocol.Version}},
		},
		ServerInfo: protocol.Implementation{Name: protocol.ServerName, Version: sess.srv.opts.Version},
	}, nil
}

// checkToken compares the token a frontend presented with the server's in
// constant time, so that how long a refusal takes tells nothing of it.
func checkToken(want, got string) error {
	if got == "" {
		return invalidParams("initializationOptions.token", "required: a socket frontend presents the token of serve.json")
	}
	if subtle.ConstantTimeCompare([]byte(want), []byte(got)) != 1 {
		return invalidParams("initializationOptions.token", "does not match the token of serve.json")
	}
	return nil
}

// challenge answers freecode/challenge: the proof that this sidecar
// holds its token, which a frontend asks for before it sends the token
// (see protocol.ChallengeParams). It is taken before initialize, on the
// read loop, and costs one HMAC.
func (sess *session) challenge(params jsonrpc2.RawMessage) (any, error) {
	token := sess.srv.opts.Token
	if token == "" {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "freecode/challenge: this sidecar has no token (it serves the editor on its stdio)")
	}
	var p protocol.ChallengeParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if b, err := hex.DecodeString(p.Nonce); err != nil || len(b) < 16 || len(b) > 64 {
		return nil, invalidParams("nonce", "want 16 to 64 random bytes, hex")
	}
	return &protocol.ChallengeResult{Proof: protocol.TokenProof(token, p.Nonce)}, nil
}

// foldersOf returns the paths of the workspace folders of an initialize:
// workspaceFolders, or the older rootUri, or rootPath.
func foldersOf(p *lsp.InitializeParams) ([]string, error) {
	if wf, ok := p.WorkspaceFolders.Get(); ok {
		var out []string
		for i, f := range wf {
			path, err := folderPath(f.URI)
			if err != nil {
				return nil, invalidParams(field("workspaceFolders", i, "uri"), "%v", err)
			}
			out = append(out, path)
		}
		return out, nil
	}
	if p.RootURI != nil && *p.RootURI != "" {
		path, err := folderPath(*p.RootURI)
		if err != nil {
			return nil, invalidParams("rootUri", "%v", err)
		}
		return []string{path}, nil
	}
	if rp, ok := p.RootPath.Get(); ok && rp != "" {
		path, err := filepath.Abs(rp)
		if err != nil {
			return nil, invalidParams("rootPath", "%v", err)
		}
		return []string{path}, nil
	}
	return nil, nil
}

// folderPath returns the local path of a folder's file: URI.
func folderPath(u uri.URI) (string, error) {
	if u.Scheme() != "file" {
		return "", fmt.Errorf("%q is not a file: URI", string(u))
	}
	p := u.FsPath()
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not an absolute path", string(u))
	}
	return filepath.Clean(p), nil
}

// initialized opens the workspace if this frontend names it (stdio), and
// starts telling the frontend what happens.
func (sess *session) initialized() {
	sess.mu.Lock()
	if sess.state != sessionInitializing {
		state := sess.state
		sess.mu.Unlock()
		sess.logger.Warn("initialized out of order; ignored", "state", state)
		return
	}
	sess.state = sessionInitialized
	root, config, caps := sess.root, sess.config, sess.caps
	sess.mu.Unlock()

	w, err := sess.srv.workspace()
	if err == errNoWorkspace {
		// Not the notification's ctx: the workspace keeps what it is
		// given, and jsonrpc2 recycles that ctx.
		w, err = sess.srv.openFor(context.Background(), root, config, caps)
		if err != nil {
			sess.srv.setOpenErr(err)
		}
	}
	if err != nil {
		sess.logger.Error("opening the workspace", "error", err)
		sess.logMessage(lsp.MessageTypeError, fmt.Sprintf("freecode-serve: %v", err))
		return
	}
	sess.wg.Go(func() { sess.forward(w) })
	sess.srv.rootsChanged()
}

// shutdown stops every MCP server and reaps every process the sidecar
// started. The sidecar takes no more requests; exit, or the frontend
// closing its connection, ends it (with stdio, the process; listening,
// the sidecar and every other frontend's connection).
func (sess *session) shutdown(ctx context.Context, _ jsonrpc2.RawMessage) (any, error) {
	sess.mu.Lock()
	sess.state = sessionShutDown
	sess.mu.Unlock()
	sess.logger.Info("shutdown")
	sess.srv.stopWorkspace(serverShutDown)
	return nil, nil
}

// exit ends the frontend's connection; with stdio, the process.
func (sess *session) exit() {
	sess.logger.Info("exit")
	sess.cancel()
}

// didChangeFolders applies a change of the frontend's workspace folders
// to the MCP roots. The project stays what it was at initialize.
func (sess *session) didChangeFolders(params jsonrpc2.RawMessage) {
	var p lsp.DidChangeWorkspaceFoldersParams
	if err := lsp.Unmarshal(params, &p); err != nil {
		sess.logger.Warn("workspace/didChangeWorkspaceFolders: bad params", "error", err)
		return
	}
	sess.mu.Lock()
	for _, f := range p.Event.Removed {
		if path, err := folderPath(f.URI); err == nil {
			sess.folders = slices.DeleteFunc(sess.folders, func(p string) bool { return p == path })
		}
	}
	for _, f := range p.Event.Added {
		path, err := folderPath(f.URI)
		if err != nil {
			sess.logger.Warn("workspace/didChangeWorkspaceFolders: folder ignored", "error", err)
			continue
		}
		if !slices.Contains(sess.folders, path) {
			sess.folders = append(sess.folders, path)
		}
	}
	sess.mu.Unlock()
	sess.srv.rootsChanged()
}
