// Package otelcoltest runs a real OpenTelemetry Collector for tests: the
// one interop/otelcol builds from the Collector's own Go modules (the OTLP
// receiver and the file exporter, one pinned release, in a module of its
// own), which `make test` builds once into the user's cache and names in
// FREECODE_OTELCOL. Start runs it as a subprocess with a generated config:
// the OTLP/HTTP receiver on a free loopback port, and one file exporter
// per signal writing OTLP JSON into the test's temporary directory.
// Collector.Read stops it, which flushes the file exporter (it writes
// through a buffer that its shutdown flushes), and reads the spans,
// metrics and log records back into plain Go values (data.go).
//
// The package imports nothing of the Collector: the product's module
// needs none of it, and `go list -deps ./cmd/...` shows none (its test).
// Tests skip, saying so, when FREECODE_OTELCOL is unset.
package otelcoltest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Env names the collector binary: `make test` sets it to the one it built
// from interop/otelcol (and cached).
const Env = "FREECODE_OTELCOL"

// startDeadline bounds the wait for the collector to listen. It only keeps
// a broken collector from hanging the test; no test depends on it.
const startDeadline = 60 * time.Second

// Collector is a running OpenTelemetry Collector.
type Collector struct {
	// URL is its OTLP/HTTP receiver's base URL, what
	// OTEL_EXPORTER_OTLP_ENDPOINT would be: http://127.0.0.1:<port>.
	URL string

	dir    string // its config and the exporters' files
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has exited
	stderr *lockedBuffer

	stopOnce sync.Once
	stopErr  error
}

// Binary returns the collector binary FREECODE_OTELCOL names, or skips
// the test when it is unset; a path that is no file fails the test.
func Binary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv(Env)
	if bin == "" {
		t.Skipf("%s is not set: this test exports to a real OpenTelemetry Collector, which `make test` builds from interop/otelcol "+
			"and names in %s (or: cd interop/otelcol && go build -o /tmp/otelcol . && export %s=/tmp/otelcol)", Env, Env, Env)
	}
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() {
		t.Fatalf("%s=%s is not the collector binary: %v", Env, bin, err)
	}
	return bin
}

// Start starts a collector, stopped when the test ends (if Read has not
// stopped it). It waits until the receiver accepts connections, for at
// most a minute, failing the test with the collector's output if it
// exits or does not listen by then.
func Start(t testing.TB) *Collector {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	// A port taken between our probe and the collector's bind makes it
	// exit at once: try another.
	for try := 1; ; try++ {
		c, err := start(bin, dir)
		if err == nil {
			t.Cleanup(func() {
				if err := c.Stop(); err != nil {
					t.Errorf("stopping the collector: %v", err)
				}
				if t.Failed() {
					t.Logf("the collector's output:\n%s", c.stderr.String())
				}
			})
			return c
		}
		var busy *portTakenError
		if !errors.As(err, &busy) || try == 3 {
			t.Fatalf("starting the OpenTelemetry Collector %s: %v", bin, err)
		}
	}
}

// portTakenError is a collector that could not bind its port.
type portTakenError struct{ output string }

func (e *portTakenError) Error() string { return "its port was taken:\n" + e.output }

func start(bin, dir string) (*Collector, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := writeConfig(cfgPath, addr, dir); err != nil {
		return nil, err
	}
	c := &Collector{URL: "http://" + addr, dir: dir, exited: make(chan struct{}), stderr: &lockedBuffer{}}
	c.cmd = exec.Command(bin, "--config=file:"+cfgPath)
	c.cmd.Dir = dir
	c.cmd.Stdout = c.stderr
	c.cmd.Stderr = c.stderr
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		c.cmd.Wait()
		close(c.exited)
	}()
	deadline := time.Now().Add(startDeadline)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return c, nil
		}
		select {
		case <-c.exited:
			out := c.stderr.String()
			if strings.Contains(out, "address already in use") {
				return nil, &portTakenError{output: out}
			}
			return nil, fmt.Errorf("it exited (%v) before it listened on %s:\n%s", c.cmd.ProcessState, addr, out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.cmd.Process.Kill()
			<-c.exited
			return nil, fmt.Errorf("it did not listen on %s within %v:\n%s", addr, startDeadline, c.stderr.String())
		}
	}
}

// freeAddr returns a loopback address with a port free now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// The exporters' files, one a signal, in the collector's directory.
const (
	tracesFile  = "traces.json"
	metricsFile = "metrics.json"
	logsFile    = "logs.json"
)

// writeConfig writes the collector's config: the OTLP receiver over HTTP
// on addr, and a file exporter for each signal into dir (OTLP JSON, one
// export request a line). The collector's own metrics are off (they would
// listen on :8888, which tests running at once would share) and it logs
// warnings and errors only. JSON is YAML, and quotes any path.
func writeConfig(path, addr, dir string) error {
	pipeline := func(exporter string) map[string]any {
		return map[string]any{"receivers": []string{"otlp"}, "exporters": []string{exporter}}
	}
	cfg := map[string]any{
		"receivers": map[string]any{
			"otlp": map[string]any{"protocols": map[string]any{"http": map[string]any{"endpoint": addr}}},
		},
		"exporters": map[string]any{
			"file/traces":  map[string]any{"path": filepath.Join(dir, tracesFile)},
			"file/metrics": map[string]any{"path": filepath.Join(dir, metricsFile)},
			"file/logs":    map[string]any{"path": filepath.Join(dir, logsFile)},
		},
		"service": map[string]any{
			"telemetry": map[string]any{
				"metrics": map[string]any{"level": "none"},
				"logs":    map[string]any{"level": "warn"},
			},
			"pipelines": map[string]any{
				"traces":  pipeline("file/traces"),
				"metrics": pipeline("file/metrics"),
				"logs":    pipeline("file/logs"),
			},
		},
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// Stop stops the collector as a user's Ctrl-C does (SIGINT: its graceful
// shutdown, in which the file exporter flushes and closes its files) and
// waits for it to exit; later calls return what the first did. An exit
// status other than 0 is an error that holds its output.
func (c *Collector) Stop() error {
	c.stopOnce.Do(func() {
		if err := c.cmd.Process.Signal(os.Interrupt); err != nil {
			// Where there is no SIGINT (Windows), or it exited already.
			c.cmd.Process.Kill()
		}
		<-c.exited
		if st := c.cmd.ProcessState; st != nil && !st.Success() {
			c.stopErr = fmt.Errorf("the collector exited with %v:\n%s", st, c.stderr.String())
		}
	})
	return c.stopErr
}

// Output returns what the collector wrote to its standard output and
// error so far.
func (c *Collector) Output() string { return c.stderr.String() }

// Read stops the collector and returns what its exporters wrote: every
// span, metric and log record it received, in the order received.
func (c *Collector) Read(t testing.TB) *Export {
	t.Helper()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	e := &Export{}
	for _, f := range []struct {
		name string
		read func([]byte) error
	}{
		{tracesFile, e.addTraces},
		{metricsFile, e.addMetrics},
		{logsFile, e.addLogs},
	} {
		b, err := os.ReadFile(filepath.Join(c.dir, f.name))
		if errors.Is(err, os.ErrNotExist) {
			continue // the exporter wrote nothing
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := decodeLines(b, f.read); err != nil {
			t.Fatalf("reading the collector's %s: %v", f.name, err)
		}
	}
	return e
}

// decodeLines hands each JSON value of b (the file exporter writes one
// export request a line) to add.
func decodeLines(b []byte, add func([]byte) error) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	for n := 1; ; n++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("value %d: %w", n, err)
		}
		if err := add(raw); err != nil {
			return fmt.Errorf("value %d: %w", n, err)
		}
	}
}

// lockedBuffer is the collector's output, written by its process's copier
// and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
