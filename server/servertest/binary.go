package servertest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// AwaitExit waits for the binary to exit, and returns its exit status.
func (env *Env) AwaitExit() int {
	env.T.Helper()
	if env.Mode != Binary {
		env.T.Fatal("AwaitExit: only a binary exits")
	}
	select {
	case <-env.exited:
	case <-time.After(HangGuard):
		env.T.Fatalf("freecode-serve did not exit within %v", HangGuard)
	}
	return env.cmd.ProcessState.ExitCode()
}

// Signal sends sig to the binary.
func (env *Env) Signal(sig os.Signal) {
	env.T.Helper()
	if env.Mode != Binary {
		env.T.Fatal("Signal: only a binary takes signals")
	}
	if err := env.cmd.Process.Signal(sig); err != nil {
		env.T.Fatal(err)
	}
}

// binaries are the programs the tests run, by name: their packages.
var binaries = map[string]string{
	"freecode-serve": "github.com/freecode/freecode/cmd/freecode-serve",
	"demo-server":    "github.com/freecode/freecode/examples/demo-server",
}

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// BinaryPath returns the path of freecode-serve or demo-server, built for
// the tests.
func BinaryPath(t *testing.T, name string) string { return binary(t, name) }

// binary returns the path of one of binaries, all built once per test
// process.
func binary(t *testing.T, name string) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "servertest-bin-")
		if binErr != nil {
			return
		}
		args := []string{"build", "-o", binDir}
		for _, pkg := range binaries {
			args = append(args, pkg)
		}
		if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			binErr = fmt.Errorf("building %v: %v\n%s", binaries, err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return filepath.Join(binDir, name)
}

// startBinary starts freecode-serve listening on a unix socket of the
// sandbox and waits until it says it listens.
func (env *Env) startBinary(t *testing.T) {
	sb := env.Sandbox
	sock := filepath.Join(filepath.Dir(sb.Home), "sock")
	env.cmd = exec.Command(binary(t, "freecode-serve"), "--listen", "unix:"+sock, "--project", sb.Project, "--config", sb.ConfigPath,
		// The tests look for slog's text lines (msg=…), as in-process.
		"--trace", "--log-level", "debug", "--log-format", "text")
	env.cmd.Env = append(withoutEnv(os.Environ(), "HOME", "FREECODE_CONFIG"), "HOME="+sb.Home)
	stderr, err := env.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := env.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	env.exited = make(chan struct{})
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			env.log.WriteString("sidecar: " + line + "\n")
			if strings.Contains(line, "msg=listening") || strings.HasPrefix(line, "INFO listening ") { // text or plain log lines
				select {
				case listening <- line:
				default:
				}
			}
		}
		env.cmd.Wait()
		close(env.exited)
	}()
	select {
	case <-listening:
	case <-env.exited:
		t.Fatalf("freecode-serve exited before it listened:\n%s", env.log.String())
	case <-time.After(HangGuard):
		t.Fatalf("freecode-serve did not listen within %v", HangGuard)
	}
}

// withoutEnv drops the variables names from env.
func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, n := range names {
			keep = keep && name != n
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}
