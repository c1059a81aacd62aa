package mcptest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// relayEnv names, in a test binary's environment, the server a relay
// runs: a JSON relaySpec.
const relayEnv = "FREECODE_MCPTEST_RELAY"

// relaySpec is what a relay runs.
type relaySpec struct {
	Command []string `json:"command"`
	Decode  bool     `json:"decode"`
}

// RelayEnv returns the environment to add to a test binary re-executed as
// a relay to the stdio MCP server command (see RunRelayIfAsked).
func RelayEnv(command []string, decode bool) []string {
	spec, _ := json.Marshal(relaySpec{Command: command, Decode: decode})
	return []string{relayEnv + "=" + string(spec)}
}

// RunRelayIfAsked makes a test binary a relay when its environment says
// so (RelayEnv), and then exits; otherwise it returns at once. Call it
// first in TestMain.
//
// A relay is the floor of any process put between an MCP client and a
// stdio server: it starts the server and forwards each line one way and
// the other, one write a line, and does nothing else. With decode, it
// decodes each message (its JSON-RPC envelope, every byte of it checked)
// and encodes it again on the way: on a round trip two decodes and two
// encodes, the least a process in the middle that speaks JSON-RPC does.
// Benchmarks measure a client through a relay against the same client
// straight to the server, in the same run.
func RunRelayIfAsked() {
	v, ok := os.LookupEnv(relayEnv)
	if !ok {
		return
	}
	var spec relaySpec
	if err := json.Unmarshal([]byte(v), &spec); err != nil || len(spec.Command) == 0 {
		fmt.Fprintf(os.Stderr, "relay: %s=%q: %v\n", relayEnv, v, err)
		os.Exit(2)
	}
	if err := relay(spec); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// relay runs the server of spec and forwards until the client closes its
// end.
func relay(spec relaySpec) error {
	cmd := exec.Command(spec.Command[0], spec.Command[1:]...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, relayEnv+"=") {
			cmd.Env = append(cmd.Env, kv) // the server is no relay
		}
	}
	cmd.Stderr = os.Stderr
	toServer, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	fromServer, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", spec.Command[0], err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { forwardLines(os.Stdout, fromServer, spec.Decode) })
	forwardLines(toServer, os.Stdin, spec.Decode)
	toServer.Close()
	wg.Wait()
	return cmd.Wait()
}

// envelope is a JSON-RPC message with its members as raw JSON.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// forwardLines copies the lines of r to w, one write a line, decoding and
// encoding each on the way when decode is set. A line that does not
// decode is forwarded as it is: a relay drops nothing.
func forwardLines(w io.Writer, r io.Reader, decode bool) {
	in := bufio.NewReaderSize(r, 64<<10)
	var out []byte
	for {
		line, err := in.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			rest, rerr := in.ReadBytes('\n')
			line, err = append(line[:len(line):len(line)], rest...), rerr
		}
		if len(line) > 0 {
			out = append(out[:0], line...)
			var m envelope
			if decode && json.Unmarshal(line, &m) == nil {
				if b, merr := json.Marshal(&m); merr == nil {
					out = append(append(out[:0], b...), '\n')
				}
			}
			if _, werr := w.Write(out); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
