package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// contextKeys are the context.WithValue keys the module's code may set,
// each with why it is no part of a tool call's contract. A call is what
// its signature says (orchestrator.Call, mcp.CallOptions, mcp.Asker):
// nothing of it rides in a context from the sidecar's handlers and the
// gateway's down to mcp.Conn, where a key would hide who answers a
// server's question, whose task a call started or who signs in again.
var contextKeys = map[string]string{
	"mcp.requestKey": "below mcp.Conn: the one value the Conn hands the go-sdk with a request of its own (asker.go), read back only " +
		"by the Conn's handlers that the go-sdk runs inside that request (a 2026-07-28 input request, a 403's step-up sign-in, " +
		"the round tripper's lost-answer probe); the go-sdk carries nothing else from a request down to them",
	"mcp.answerSlotKey": "below mcp.Conn: the stdio transport's slot for a tools/call's answer (stdioanswer.go), given by a sending " +
		"middleware of the go-sdk client to the transport's Write, which the go-sdk reaches with nothing but the call's context",
	"mcp.heardKey":       "a connect's protocol discovery (negotiate.go): no call runs on a session that is connecting",
	"mcp.installWaitKey": "a connect's wait for a package runner's install (runner.go)",
	"mcp.inputSeenKey":   "a connect's discovery waits until the server reads (inputseen.go)",
	"mcp.probeKey":       "a connect's negotiation probe (negotiate.go)",
	"mcp/oauth.peerKey":  "the loopback callback server's connection (http.Server.ConnContext): whose socket brought the browser back",
	"mcp/oauth.openedPagesKey": "inside a sign-in, from the Flow to its own OpenBrowser through the opener's (ctx, url), " +
		"so that the pages it wrote go when the sign-in ends",
	"mcp/oauth.oauth2.HTTPClient": "how golang.org/x/oauth2 takes the HTTP client of a token exchange, on a context made for it",
	"mcp/sandbox.checkedKey":      "the sandbox's filtering proxy, between its check of a server's own request and its forwarding",
	"server.slotKey":              "http.Server.ConnContext: the listener's slot of a browser's TCP connection, read at its WebSocket upgrade",
	"internal/otelset.drawnKey": "after a call, on a context of its own that holds a span's parent alone: the IDs drawn on the " +
		"call's path for a span made later (otelset.Later), which a tracer takes only from the context it starts a span on; " +
		"never on a call's context",
	"telemetry.presetKey": "after a call, on a context of the span replay's own: the span whose SDK span is being made, which the " +
		"SDK's ID generator and sampler take only from the context they are given (deferred.go); never on a call's context",
}

// TestNoContextValuesOnTheCallPath lists every context.WithValue key the
// module's code sets (its _test files aside) and fails on any that
// contextKeys does not explain, and on any type that overrides a
// context's Value, which is the other way to hide a value in one. Read
// from the source, as go vet reads it, so that a key cannot come back
// without saying here why it is not a call's.
func TestNoContextValuesOnTheCallPath(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	found := map[string][]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "WithValue" && isIdent(sel.X, "context") && len(n.Args) == 3 {
					key := pkg + "." + keyName(n.Args[1])
					found[key] = append(found[key], fset.Position(n.Pos()).String())
				}
			case *ast.FuncDecl:
				if n.Recv != nil && n.Name.Name == "Value" && n.Type.Params.NumFields() == 1 && n.Type.Results.NumFields() == 1 &&
					isAny(n.Type.Params.List[0].Type) && isAny(n.Type.Results.List[0].Type) {
					t.Errorf("%s: a type with its own Value(key) hides or adds a context's values; give the value to whoever needs it instead", fset.Position(n.Pos()))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(found))
	for k := range found {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, ok := contextKeys[k]; !ok {
			t.Errorf("context.WithValue key %s (%s) is not among contextKeys: pass what it carries as a parameter, "+
				"or, if it is no part of a tool call's contract, add it there saying why", k, strings.Join(found[k], ", "))
		}
	}
	if t.Failed() {
		t.Logf("keys found: %q", keys)
	}
}

// keyName names a context key as the source writes it: the type of a
// composite literal (key{}), else the expression (oauth2.HTTPClient).
func keyName(e ast.Expr) string {
	if cl, ok := e.(*ast.CompositeLit); ok {
		e = cl.Type
	}
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			return x.Name + "." + e.Sel.Name
		}
	}
	return types.ExprString(e)
}

// isAny says whether e is the type any.
func isAny(e ast.Expr) bool {
	if it, ok := e.(*ast.InterfaceType); ok {
		return it.Methods.NumFields() == 0
	}
	return isIdent(e, "any")
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
