package servertest

import (
	"net"
	"strings"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
)

// CLIName is the clientInfo.name a CLI frontend reports, as the freecode
// command's live commands do.
const CLIName = "freecode-cli"

// ConnectCLI connects and initializes a frontend as the freecode
// command's live commands do (connectSidecar): clientInfo CLIName, the
// sidecar's token, no workspace folders and no config path, at the
// sidecar's own address: a ws:// one in WebSocket mode, where the other
// frontends are browser tabs. Stdio mode has no place for it: its one
// frontend is the editor.
func (env *Env) ConnectCLI(name string, opts *EditorOptions) *Editor {
	t := env.T
	t.Helper()
	var o EditorOptions
	if opts != nil {
		o = *opts
	}
	fopts := &frontend.Options{ClientName: CLIName}
	ed := newEditor(t, name, nil, fopts, env.log, &o)
	switch env.Mode {
	case Stdio:
		t.Fatal("ConnectCLI: Stdio mode has one frontend, the editor")
	case Shared:
		fopts.Token = env.token
		rwc := env.pipe()
		ed.rwc, ed.Client = rwc, frontend.New(rwc, fopts)
	case WebSocket:
		fopts.Token = env.token
		c, err := frontend.Dial(t.Context(), env.web.addr, fopts)
		if err != nil {
			t.Fatalf("%s: dialing %s: %v", name, env.web.addr, err)
		}
		ed.rwc, ed.Client = c, c
	case Binary:
		sf, err := protocol.ReadServeFile(env.Sandbox.ServeFile)
		if err != nil {
			t.Fatal(err)
		}
		fopts.Token = sf.Token
		nc, err := net.Dial("unix", strings.TrimPrefix(sf.Address, "unix:"))
		if err != nil {
			t.Fatal(err)
		}
		ed.rwc, ed.Client = nc, frontend.New(nc, fopts)
	}
	env.editors = append(env.editors, ed)
	if _, err := ed.Initialize(t.Context()); err != nil {
		t.Fatalf("%s: initialize: %v", name, err)
	}
	return ed
}
