package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/mcp/proc"
)

// testServerEnv selects the test MCP server mode of the test binary; its
// arguments are misbehaviours:
//
//	banner         print a banner and a log line on stdout around messages
//	noinit         never answer initialize
//	fork           fork a child that ignores SIGTERM (its pid on stderr)
//	ignoreterm     ignore SIGTERM and stdin EOF
//	pages          tools/list always answers with the same next cursor
//	bigpages       tools/list pages forever, each a tool with a 256 KiB description
//	crashafter=F:N exit at once on start number N+1 and later (count in file F)
//	ready=P        open the named pipe P for writing once running (see readyPipe)
//	printenv       print the environment to stderr and stdout first
//	exit           with printenv: then exit 1 naming $LIT
//	schemapages    tools/list pages forever, each 500 tools with 20-property schemas
//	deeptool       add a tool "deep" whose answer nests 10,001 levels deep
//	child          (internal) the forked child: ignore SIGTERM, sleep
//	jsonnoise      print JSON that is no JSON-RPC message around answers
//	badanswer      add a tool "badanswer" whose answer has a wrong version tag
//	escape=F       start a daemon by double fork (detach=F) and wait for
//	               its parent to exit before serving
//	detach=F       (internal) start a child in a session of its own (setsid),
//	               write its pid to file F, exit
//	legacy         a hand-written 2024-11-05 server (runLegacyServer)
//	starts=F       count this start in file F
//	npxbroken=D    if D/node_modules exists (alwaysbroken: in any case),
//	               fail as node does on a half-written npx install in D:
//	               ERR_MODULE_NOT_FOUND naming a file under D, exit 1
//	install=P      "install" before reading stdin (after ready): read the
//	               named pipe P until EOF, then serve
//	rollback=F     while installing, take SIGTERM as npm does: write F
//	               ("rolled back") and exit
//	slowstart=D    read nothing for the duration D, then serve
//	methods=F      append the method of each request received to F, a line each
const testServerEnv = "FREECODE_MCP_TEST_SERVER"

// lockedWriter makes the SDK's writes and our stray lines whole lines.
type lockedWriter struct {
	mu   sync.Mutex
	w    io.WriteCloser
	deep bool // replace deepMarker with 10,001 nested arrays
}

// deepMarker is what the deep tool answers, for the writer to replace.
const deepMarker = "DEEP-MARKER"

// badMarker is what the badanswer tool answers: the writer sends, for the
// answer that holds it, one with a wrong version tag.
const badMarker = "BAD-ANSWER-MARKER"

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if bytes.Contains(p, []byte(`"`+badMarker+`"`)) {
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(p, &msg)
		if _, err := fmt.Fprintf(l.w, "{\"jsonrpc\":\"1.0\",\"id\":%s,\"result\":{\"content\":[]}}\n", msg.ID); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if l.deep && bytes.Contains(p, []byte(`"`+deepMarker+`"`)) {
		deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
		if _, err := l.w.Write(bytes.ReplaceAll(p, []byte(`"`+deepMarker+`"`), []byte(deep))); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }

func runTestServer(args []string) int {
	flags := map[string]string{}
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		flags[k] = v
	}
	if _, ok := flags["legacy"]; ok {
		return runLegacyServer(os.Stdin, os.Stdout)
	}
	if _, ok := flags["child"]; ok {
		signal.Ignore(syscall.SIGTERM)
		time.Sleep(time.Hour)
		return 0
	}
	if f, ok := flags["detach"]; ok {
		cmd := exec.Command(os.Args[0], "child")
		cmd.Env = os.Environ()
		ownSession(cmd)
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "detach:", err)
			return 1
		}
		if err := os.WriteFile(f, []byte(strconv.Itoa(cmd.Process.Pid)), 0o600); err != nil {
			return 1
		}
		return 0
	}
	if f, ok := flags["escape"]; ok {
		cmd := exec.Command(os.Args[0], "detach="+f)
		cmd.Env = os.Environ()
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "escape:", err)
			return 1
		}
	}
	if f, ok := flags["stderrfile"]; ok {
		// Write a real program's stderr (testdata/stderr) and exit as it did.
		b, _ := os.ReadFile(f)
		os.Stderr.Write(b)
		code, _ := strconv.Atoi(flags["exit"])
		if n, ok := flags["exitbump"]; ok {
			// Each run exits with a code one higher: never the same exit twice.
			b, _ := os.ReadFile(n)
			k, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			os.WriteFile(n, []byte(strconv.Itoa(k+1)), 0o600)
			code += k
		}
		return code
	}
	if f, ok := flags["starts"]; ok {
		b, _ := os.ReadFile(f)
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		os.WriteFile(f, []byte(strconv.Itoa(n+1)), 0o600)
	}
	if dir, ok := flags["npxbroken"]; ok {
		_, always := flags["alwaysbroken"]
		if _, err := os.Stat(filepath.Join(dir, "node_modules")); err == nil || always {
			fmt.Fprintf(os.Stderr, "node:internal/modules/esm/resolve:873\n  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);\n        ^\n\n")
			fmt.Fprintf(os.Stderr, "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from %s\n", filepath.Join(dir, "node_modules", "@example", "server", "dist", "index.js"))
			fmt.Fprintln(os.Stderr, "\nNode.js v20.20.2")
			return 1
		}
	}
	if f, ok := flags["crashafter"]; ok {
		file, nStr, _ := strings.Cut(f, ":")
		n, _ := strconv.Atoi(nStr)
		b, _ := os.ReadFile(file)
		count, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		count++
		os.WriteFile(file, []byte(strconv.Itoa(count)), 0o600)
		if count > n {
			fmt.Fprintln(os.Stderr, "refusing to start: start", count)
			return 2
		}
	}
	if _, ok := flags["ignoreterm"]; ok {
		signal.Ignore(syscall.SIGTERM)
	}
	if _, ok := flags["printenv"]; ok {
		// A server that prints its environment, to stderr and around its
		// messages on stdout, and then says what it fails on.
		for _, kv := range os.Environ() {
			fmt.Fprintln(os.Stderr, kv)
			fmt.Println("env:", kv)
		}
		if _, ok := flags["exit"]; ok {
			fmt.Fprintln(os.Stderr, "giving up on LIT="+os.Getenv("LIT"))
			return 1
		}
	}
	if path, ok := flags["ready"]; ok {
		if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
	}
	if pipe, ok := flags["install"]; ok {
		if f, ok := flags["rollback"]; ok {
			term := make(chan os.Signal, 1)
			signal.Notify(term, syscall.SIGTERM)
			go func() {
				<-term
				os.WriteFile(f, []byte("rolled back"), 0o600)
				os.Exit(0)
			}()
		}
		if f, err := os.Open(pipe); err == nil {
			io.Copy(io.Discard, f)
			f.Close()
		}
		signal.Reset(syscall.SIGTERM)
	}
	if _, ok := flags["fork"]; ok {
		cmd := exec.Command(os.Args[0], "child")
		cmd.Env = os.Environ()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fork:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "child pid %d\n", cmd.Process.Pid)
	}
	if _, ok := flags["noinit"]; ok {
		io.Copy(io.Discard, os.Stdin)
		if _, ok := flags["ignoreterm"]; ok {
			time.Sleep(time.Hour)
		}
		return 0
	}
	if d, ok := flags["slowstart"]; ok {
		// A server slow to come up: it reads nothing for d.
		wait, _ := time.ParseDuration(d)
		time.Sleep(wait)
	}
	fmt.Fprintln(os.Stderr, "test server starting")
	out := &lockedWriter{w: os.Stdout}
	_, banner := flags["banner"]
	if banner {
		fmt.Fprintln(out, "Test server v1.0 ready on stdio")
		fmt.Fprintln(out, "")
		fmt.Fprintln(out, "{not json, just braces}")
	}
	server := newTestServer(out, banner)
	if _, ok := flags["attack"]; ok {
		mcptest.AddAttackTool(server)
	}
	if _, ok := flags["view"]; ok {
		addView(server)
	}
	if _, ok := flags["badanswer"]; ok {
		server.AddTool(&mcpsdk.Tool{Name: "badanswer", InputSchema: map[string]any{"type": "object"}},
			func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
				return mcptest.TextResult(badMarker), nil
			})
	}
	if f, ok := flags["methods"]; ok {
		server.AddReceivingMiddleware(func(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
			return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
				if mf, err := os.OpenFile(f, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err == nil {
					fmt.Fprintln(mf, method)
					mf.Close()
				}
				return next(ctx, method, req)
			}
		})
	}
	if _, ok := flags["jsonnoise"]; ok {
		// Around every call's answer: JSON that is no JSON-RPC message
		// (one line showing $NOISE_TOKEN, one 8 KB long), and plain text.
		server.AddReceivingMiddleware(func(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
			return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
				if method == "tools/call" {
					fmt.Fprintf(out, "{\"level\":30,\"msg\":\"tool called\",\"token\":%q}\n", os.Getenv("NOISE_TOKEN"))
					fmt.Fprintln(out, `[1,2,3]`)
					fmt.Fprintln(out, `{"jsonrpc":"2.0","method":42}`)
					fmt.Fprintln(out, `{"pad":"`+strings.Repeat("p", 8000)+`"}`)
				}
				res, err := next(ctx, method, req)
				if method == "tools/call" {
					fmt.Fprintln(out, `[]`)
					fmt.Fprintln(out, "plain text after the answer")
				}
				return res, err
			}
		})
	}
	if _, ok := flags["pages"]; ok {
		server.AddReceivingMiddleware(func(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
			return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
				if method != "tools/list" {
					return next(ctx, method, req)
				}
				return &mcpsdk.ListToolsResult{
					Tools:      []*mcpsdk.Tool{{Name: "paged", InputSchema: map[string]any{"type": "object"}}},
					NextCursor: "again",
				}, nil
			}
		})
	}
	if _, ok := flags["bigpages"]; ok {
		big := strings.Repeat("d", 256<<10)
		server.AddReceivingMiddleware(func(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
			return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
				if method != "tools/list" {
					return next(ctx, method, req)
				}
				n, _ := strconv.Atoi(req.(*mcpsdk.ListToolsRequest).Params.Cursor)
				return &mcpsdk.ListToolsResult{
					Tools:      []*mcpsdk.Tool{{Name: fmt.Sprintf("big%d", n), Description: big, InputSchema: map[string]any{"type": "object"}}},
					NextCursor: strconv.Itoa(n + 1),
				}, nil
			}
		})
	}
	if _, ok := flags["deeptool"]; ok {
		// A Go server cannot encode a value nested past 10,000 levels (its
		// encoder stops there), so the writer puts the nesting in for it.
		out.deep = true
		server.AddTool(&mcpsdk.Tool{Name: "deep", InputSchema: map[string]any{"type": "object"}},
			func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
				return mcptest.TextResult(deepMarker), nil
			})
	}
	if _, ok := flags["schemapages"]; ok {
		server.AddReceivingMiddleware(func(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
			return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
				if method != "tools/list" {
					return next(ctx, method, req)
				}
				n, _ := strconv.Atoi(req.(*mcpsdk.ListToolsRequest).Params.Cursor)
				return &mcpsdk.ListToolsResult{Tools: schemaPage(n), NextCursor: strconv.Itoa(n + 1)}, nil
			}
		})
	}
	err := server.Run(context.Background(), &mcpsdk.IOTransport{Reader: os.Stdin, Writer: out})
	if _, ok := flags["ignoreterm"]; ok {
		time.Sleep(time.Hour)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		return 1
	}
	return 0
}

func newTestServer(out io.Writer, banner bool) *mcpsdk.Server {
	server := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "testserver", Version: "1.2.3"}, nil)
	obj := map[string]any{"type": "object"}
	server.AddTool(&mcpsdk.Tool{Name: "echo", Description: "echoes text", InputSchema: obj},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			if banner {
				fmt.Fprintln(out, "log: echo called")
			}
			return mcptest.TextResult(mcptest.StringArg(req, "text")), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "env", Description: "reports the environment", InputSchema: obj},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			env := os.Environ()
			sort.Strings(env)
			wd, _ := os.Getwd()
			return mcptest.TextResult("cwd=" + wd + "\n" + strings.Join(env, "\n")), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "huge", Description: "writes an oversized line", InputSchema: obj},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			n, _ := strconv.Atoi(mcptest.StringArg(req, "bytes"))
			w := bufio.NewWriterSize(out, 1<<16)
			// One valid JSON-RPC notification, n bytes long, in one line.
			prefix := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`
			w.WriteString(prefix)
			chunk := strings.Repeat("x", 1<<16)
			for left := n - len(prefix) - 4; left > 0; left -= len(chunk) {
				w.WriteString(chunk[:min(left, len(chunk))])
			}
			w.WriteString("\"}}\n")
			w.Flush()
			return mcptest.TextResult("after huge"), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "crash", Description: "exits the server", InputSchema: obj},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "progress", Description: "reports progress", InputSchema: obj},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			tag := mcptest.StringArg(req, "tag")
			for i := 1; i <= 3; i++ {
				err := req.Session.NotifyProgress(ctx, &mcpsdk.ProgressNotificationParams{
					ProgressToken: req.Params.GetProgressToken(),
					Progress:      float64(i), Total: 3, Message: tag,
				})
				if err != nil {
					return nil, err
				}
			}
			return mcptest.TextResult(tag), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "addtool", Description: "adds a tool", InputSchema: obj},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			name := mcptest.StringArg(req, "name")
			server.AddTool(&mcpsdk.Tool{Name: name, InputSchema: obj},
				func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
					return mcptest.TextResult(name), nil
				})
			return mcptest.TextResult("added"), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "freeze", Description: "stops the whole server (SIGSTOP)", InputSchema: obj},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			freezeSelf()
			// A process-directed SIGSTOP can let this thread run on for a
			// moment (the stop reaches each thread by IPI): long enough to
			// write a response under load. A frozen server answers nothing.
			<-ctx.Done()
			return nil, ctx.Err()
		})
	server.AddTool(&mcpsdk.Tool{Name: "sleep", Description: "sleeps until cancelled", InputSchema: obj},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	return server
}

// schemaPage is page n of the schemapages server: 500 tools whose input
// schemas have 20 small properties each, the shape that costs a decoder
// the most memory per byte of JSON (about 600 KB a page).
func schemaPage(n int) []*mcpsdk.Tool {
	tools := make([]*mcpsdk.Tool, 500)
	for i := range tools {
		props := map[string]any{}
		for p := range 20 {
			props[fmt.Sprintf("p%d", p)] = map[string]any{"type": "string", "description": fmt.Sprintf("parameter %d", p)}
		}
		tools[i] = &mcpsdk.Tool{
			Name:        fmt.Sprintf("t%d_%d", n, i),
			InputSchema: map[string]any{"type": "object", "properties": props},
		}
	}
	return tools
}

// testOwnerEnv runs the test binary as a FreeCode process that records its
// servers in the run directory the variable names. With
// testOwnerEscapeEnv set, it runs a Manager whose one server starts a
// daemon by double fork and setsid (escape=F, F the variable's value),
// prints "ready <leader> <daemon>" and waits to be killed.
//
// With testOwnerInstallEnv set to four lines, a fake npx's path and the
// install=, rollback= and ready= files of the test server, it starts that
// server through the fake npx, which "installs" until it is killed.
//
// testReapEnv runs it as the next FreeCode process instead: it reaps what
// the run directory the variable names records (proc.ReapOrphans), and
// exits.
const (
	testOwnerEnv        = "FREECODE_MCP_TEST_OWNER"
	testOwnerEscapeEnv  = "FREECODE_MCP_TEST_OWNER_ESCAPE"
	testOwnerInstallEnv = "FREECODE_MCP_TEST_OWNER_INSTALL"
	testReapEnv         = "FREECODE_MCP_TEST_REAP"
	// testOwnerSandboxEnv, with testOwnerEscapeEnv, runs the server in a
	// sandbox whose cwd is the variable's value.
	testOwnerSandboxEnv = "FREECODE_MCP_TEST_OWNER_SANDBOX"
	// testOwnerStopEnv, with testOwnerEscapeEnv, has the owner stop its
	// server as FreeCode does (Manager.Close) and exit once its stdin
	// ends, rather than wait to be killed.
	testOwnerStopEnv = "FREECODE_MCP_TEST_OWNER_STOP_ON_EOF"
)

func runTestOwner(dir string) int {
	if err := proc.ReapOrphans(dir, nil); err != nil {
		fmt.Fprintln(os.Stderr, "owner:", err)
		return 1
	}
	exe, err := os.Executable()
	if err != nil {
		return 1
	}
	if file := os.Getenv(testOwnerEscapeEnv); file != "" {
		return runEscapeOwner(exe, file)
	}
	spec := os.Getenv(testOwnerInstallEnv)
	f := strings.Split(spec, "\n")
	if len(f) != 4 {
		fmt.Fprintln(os.Stderr, "owner: neither", testOwnerEscapeEnv, "nor", testOwnerInstallEnv, "set")
		return 1
	}
	c := NewConn(config.Server{
		Name: "installing", Type: config.TypeLocal, Enabled: true,
		Command: []string{f[0], "-y", "@example/server", "install=" + f[1], "rollback=" + f[2], "ready=" + f[3]},
		Env:     map[string]string{testServerEnv: "1"},
		Timeout: time.Minute,
	}, &ConnOptions{NoRetry: true})
	c.Start(context.Background()) // until the test kills this process
	return 1
}

// runReaper is the FreeCode process that starts after a killed one.
func runReaper(dir string) int {
	if err := proc.ReapOrphans(dir, nil); err != nil {
		fmt.Fprintln(os.Stderr, "reaper:", err)
		return 1
	}
	return 0
}

// runEscapeOwner is runTestOwner with a Manager and a server that starts a
// daemon, whose pid it writes to file.
func runEscapeOwner(exe, file string) int {
	m := NewManager(&ManagerOptions{ConnOptions: ConnOptions{NoRetry: true}})
	srv := config.Server{
		Name: "escaper", Type: config.TypeLocal, Enabled: true,
		Command: []string{exe, "escape=" + file},
		Env:     map[string]string{testServerEnv: "1"},
		Timeout: time.Minute,
	}
	if dir := os.Getenv(testOwnerSandboxEnv); dir != "" {
		srv.Cwd, srv.Sandbox = dir, &config.Sandbox{Network: config.NetworkNone}
	}
	_ = m.Apply(context.Background(), []config.Server{srv})
	st, err := m.Start(context.Background(), "escaper")
	if err != nil {
		fmt.Fprintln(os.Stderr, "owner:", err)
		return 1
	}
	b, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "owner:", err)
		return 1
	}
	fmt.Printf("ready %d %s\n", st.PID, b)
	if os.Getenv(testOwnerStopEnv) != "" {
		io.Copy(io.Discard, os.Stdin)
		m.Close()
		return 0
	}
	time.Sleep(time.Hour) // until the test kills it
	return 0
}
