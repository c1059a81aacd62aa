package sandbox

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/freecode/freecode/config"
)

func init() { platformVerb = linuxVerb }

// linuxVerb runs the test server's verbs of the seccomp filter (see
// TestMain).
func linuxVerb(what, v string) (bool, error) {
	switch what {
	case "unshare":
		// A threaded process (any Go program) is refused this with EINVAL
		// by the kernel; the filter says EPERM before the kernel looks.
		if err := syscall.Unshare(syscall.CLONE_NEWUSER); err != nil {
			return true, fmt.Errorf("unshare(CLONE_NEWUSER): %w", err)
		}
		return true, nil
	case "clone-userns":
		// Go starts a process in a new user namespace with clone, whose
		// flags the filter sees.
		cmd := exec.Command("true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
		if err := cmd.Run(); err != nil {
			return true, fmt.Errorf("clone(CLONE_NEWUSER): %w", err)
		}
		return true, nil
	case "unix":
		c, err := net.DialTimeout("unix", v, 5*time.Second)
		if err == nil {
			c.Close()
		}
		return true, err
	case "socketpair":
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err == nil {
			syscall.Close(fds[0])
			syscall.Close(fds[1])
		}
		return true, err
	case "sys":
		return true, rawSyscall(v)
	}
	return false, nil
}

// rawSyscall makes the system call name with arguments that do nothing
// unfiltered: each fails otherwise with an error other than the
// filter's, or succeeds.
func rawSyscall(name string) error {
	var e syscall.Errno
	switch name {
	case "clone3": // size 0: EINVAL
		_, _, e = syscall.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)
	case "io_uring_setup": // no params: EFAULT
		_, _, e = syscall.RawSyscall(unix.SYS_IO_URING_SETUP, 0, 0, 0)
	case "ptrace": // a pid above pid_max: ESRCH
		_, _, e = syscall.RawSyscall(unix.SYS_PTRACE, unix.PTRACE_ATTACH, 0x3ffffff0, 0)
	case "process_vm_readv": // its own memory, no vectors: 0
		_, _, e = syscall.RawSyscall6(unix.SYS_PROCESS_VM_READV, uintptr(os.Getpid()), 0, 0, 0, 0, 0)
	case "process_vm_writev":
		_, _, e = syscall.RawSyscall6(unix.SYS_PROCESS_VM_WRITEV, uintptr(os.Getpid()), 0, 0, 0, 0, 0)
	case "setns": // fd -1: EBADF
		_, _, e = syscall.RawSyscall(unix.SYS_SETNS, ^uintptr(0), 0, 0)
	default:
		return fmt.Errorf("unknown system call %q", name)
	}
	if e != 0 {
		return e
	}
	return nil
}

// needFilter skips where this architecture has no filter.
func needFilter(t *testing.T) {
	t.Helper()
	needBwrap(t)
	if _, ok := seccompArches[runtime.GOARCH]; !ok {
		t.Skipf("no seccomp filter on %s", runtime.GOARCH)
	}
}

// A sandboxed server cannot make a user namespace: one would give it the
// capabilities to undo the sandbox's mounts. The refusal is the
// filter's EPERM: bubblewrap's --disable-userns alone says ENOSPC, and
// without either clone succeeds (and unshare, threaded, says EINVAL).
func TestNoNestedUserNamespace(t *testing.T) {
	needFilter(t)
	cwd := t.TempDir()
	for _, arg := range []string{"clone-userns", "unshare"} {
		out, stderr, _ := runIn(t, config.Sandbox{Network: config.NetworkNone}, "", cwd, arg)
		if out != "fail" || !strings.HasSuffix(stderr, ": operation not permitted") {
			t.Errorf("%s: %q (stderr %q), want fail with EPERM", arg, out, stderr)
			continue
		}
		ds := Denials(Policy{Cwd: cwd}, config.Sandbox{}, []string{stderr}, nil)
		if len(ds) != 1 || ds[0].Kind != DeniedNamespace || ds[0].Fix != "" {
			t.Errorf("%s: denials %+v", arg, ds)
		}
	}
}

// A unix socket on the host, in a directory the sandbox shows (its cwd),
// is out of reach under every network, the allow-list's bridge included,
// unless the entry allows unix sockets; the refusal's denial says so.
func TestUnixSockets(t *testing.T) {
	needFilter(t)
	cwd := t.TempDir()
	sock := filepath.Join(cwd, "host.sock")
	listenAndClose(t, "unix", sock)
	for _, network := range []string{config.NetworkNone, config.NetworkAll, config.NetworkDomains} {
		for _, allow := range []bool{false, true} {
			b := config.Sandbox{Network: network, AllowUnixSockets: allow}
			out, stderr, _ := runIn(t, b, "", cwd, "unix="+sock)
			if want := map[bool]string{false: "fail", true: "ok"}[allow]; out != want {
				t.Errorf("network %s, allowUnixSockets %v: %q (stderr %q), want %s", network, allow, out, stderr, want)
				continue
			}
			if allow {
				continue
			}
			ds := Denials(Policy{Cwd: cwd, Network: network}, b, []string{stderr}, nil)
			if len(ds) != 1 || ds[0].Kind != DeniedUnixSocket || ds[0].What != sock || ds[0].Fix != `"sandbox":{"allowUnixSockets":true}` {
				t.Errorf("network %s: denials %+v of stderr %q", network, ds, stderr)
			}
		}
	}
}

// The filter's other refusals, each with its errno, and what it leaves:
// socketpair, which node uses for its children's stdio.
func TestSeccompRefusals(t *testing.T) {
	needFilter(t)
	cwd := t.TempDir()
	const eperm, enosys = "operation not permitted", "function not implemented"
	for _, tc := range []struct{ arg, want string }{
		{"sys=clone3", enosys},
		{"sys=io_uring_setup", enosys},
		{"sys=ptrace", eperm},
		{"sys=process_vm_readv", eperm},
		{"sys=process_vm_writev", eperm},
		{"sys=setns", eperm},
		{"socketpair", ""},
	} {
		out, stderr, _ := runIn(t, config.Sandbox{Network: config.NetworkNone}, "", cwd, tc.arg)
		if tc.want == "" && out != "ok" || tc.want != "" && (out != "fail" || stderr != tc.want) {
			t.Errorf("%s: %q (stderr %q), want %q", tc.arg, out, stderr, tc.want)
		}
	}
}

// The table's numbers are the kernel's, as x/sys knows them here.
func TestSeccompNumbers(t *testing.T) {
	a, ok := seccompArches[runtime.GOARCH]
	if !ok {
		t.Skipf("no seccomp filter on %s", runtime.GOARCH)
	}
	audit := map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]
	for _, c := range []struct {
		name      string
		got, want uint32
	}{
		{"audit arch", a.audit, audit},
		{"unshare", a.unshare, unix.SYS_UNSHARE},
		{"clone", a.clone, unix.SYS_CLONE},
		{"clone3", a.clone3, unix.SYS_CLONE3},
		{"socket", a.socket, unix.SYS_SOCKET},
		{"io_uring_setup", a.ioUringSetup, unix.SYS_IO_URING_SETUP},
		{"ptrace", a.ptrace, unix.SYS_PTRACE},
		{"process_vm_readv", a.vmReadv, unix.SYS_PROCESS_VM_READV},
		{"process_vm_writev", a.vmWritev, unix.SYS_PROCESS_VM_WRITEV},
		{"setns", a.setns, unix.SYS_SETNS},
	} {
		if c.got != c.want {
			t.Errorf("%s on %s: %d, want %d", c.name, runtime.GOARCH, c.got, c.want)
		}
	}
}

// The program of each architecture, run by a small interpreter on the
// seccomp_data of one call.
func TestSeccompProgram(t *testing.T) {
	const (
		allow  = unix.SECCOMP_RET_ALLOW
		eperm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		i386   = 0x40000003 // AUDIT_ARCH_I386
	)
	socketpair := map[string]uint32{"amd64": 53, "arm64": 199}
	for arch, a := range seccompArches {
		for _, allowUnix := range []bool{false, true} {
			unixSocket := uint32(eperm)
			if allowUnix {
				unixSocket = allow
			}
			cases := []struct {
				name     string
				audit    uint32
				nr       uint32
				arg0     uint64
				want     uint32
				onlyX32  bool
				onlyArch string
			}{
				{name: "socket(AF_INET)", nr: a.socket, arg0: unix.AF_INET, want: allow},
				{name: "socket(AF_UNIX)", nr: a.socket, arg0: unix.AF_UNIX, want: unixSocket},
				// The kernel reads an int: the high half changes nothing.
				{name: "socket(AF_UNIX), high bits set", nr: a.socket, arg0: 1<<32 | unix.AF_UNIX, want: unixSocket},
				{name: "socketpair(AF_UNIX)", nr: socketpair[arch], arg0: unix.AF_UNIX, want: allow},
				{name: "unshare(CLONE_NEWNS)", nr: a.unshare, arg0: unix.CLONE_NEWNS, want: allow},
				{name: "unshare(CLONE_NEWUSER)", nr: a.unshare, arg0: unix.CLONE_NEWUSER | unix.CLONE_NEWNS, want: eperm},
				{name: "clone, a thread", nr: a.clone, arg0: 0x3d0f00, want: allow},
				{name: "clone(CLONE_NEWUSER)", nr: a.clone, arg0: unix.CLONE_NEWUSER | uint64(unix.SIGCHLD), want: eperm},
				{name: "clone3", nr: a.clone3, want: enosys},
				{name: "io_uring_setup", nr: a.ioUringSetup, want: enosys},
				{name: "ptrace", nr: a.ptrace, want: eperm},
				{name: "process_vm_readv", nr: a.vmReadv, want: eperm},
				{name: "process_vm_writev", nr: a.vmWritev, want: eperm},
				{name: "setns", nr: a.setns, want: eperm},
				{name: "another arch's call", audit: i386, nr: 1, want: enosys},
				{name: "x32's socket(AF_INET)", nr: x32Bit | a.socket, arg0: unix.AF_INET, want: enosys, onlyX32: true},
			}
			prog := seccompProgram(arch, allowUnix)
			for _, c := range cases {
				if c.onlyX32 && !a.x32 {
					continue
				}
				if c.audit == 0 {
					c.audit = a.audit
				}
				var data [64]byte // struct seccomp_data
				binary.LittleEndian.PutUint32(data[offNr:], c.nr)
				binary.LittleEndian.PutUint32(data[offArch:], c.audit)
				binary.LittleEndian.PutUint64(data[offArg0:], c.arg0)
				if got := runBPF(t, prog, data); got != c.want {
					t.Errorf("%s, allowUnix %v: %s returns %#x, want %#x", arch, allowUnix, c.name, got, c.want)
				}
			}
		}
	}
	if seccompProgram("riscv64", false) != nil {
		t.Error("a program for an architecture without a table")
	}
}

// runBPF runs prog, of the instructions seccompProgram uses, on data.
func runBPF(t *testing.T, prog []unix.SockFilter, data [64]byte) uint32 {
	t.Helper()
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		jump := func(cond bool) {
			if cond {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		}
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			jump(acc == in.K)
		case unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			jump(acc >= in.K)
		case unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			jump(acc&in.K != 0)
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("instruction %d: unknown code %#x", pc, in.Code)
		}
	}
	t.Fatal("the program runs off its end")
	return 0
}

// What programs say of the filter's refusals, as Denials reads it.
func TestDenialsOfFilter(t *testing.T) {
	const fix = `"sandbox":{"allowUnixSockets":true}`
	for _, tc := range []struct {
		line, kind, what, fix string
	}{
		{"Error: connect EPERM /run/dbus/system_bus_socket", DeniedUnixSocket, "/run/dbus/system_bus_socket", fix},
		{"dial unix /var/run/nscd/socket: socket: operation not permitted", DeniedUnixSocket, "/var/run/nscd/socket", fix},
		{"curl: socket: Operation not permitted", DeniedUnixSocket, "", fix},
		{"unshare: unshare failed: Operation not permitted", DeniedNamespace, "", ""},
		{"[0101/000000.000000:FATAL:zygote_host_impl_linux.cc(127)] Failed to move to new namespace: PID namespaces supported, Network namespace supported, but failed: errno = Operation not permitted", DeniedNamespace, "", ""},
		// bwrap's --disable-userns, where there is no filter.
		{"unshare: unshare failed: No space left on device", DeniedNamespace, "", ""},
		// Not the filter's.
		{"Error: EACCES: permission denied, open '/usr/lib/x'", DeniedWrite, "/usr/lib/x", `"sandbox":{"filesystem":{"allowWrite":["/usr/lib"]}}`},
		{"Error: connect EPERM 10.0.0.1:443", "", "", ""},
	} {
		ds := Denials(Policy{Cwd: "/work", Network: config.NetworkNone}, config.Sandbox{}, []string{tc.line}, nil)
		if tc.kind == "" {
			if len(ds) != 0 {
				t.Errorf("%q: denials %+v, want none", tc.line, ds)
			}
			continue
		}
		if len(ds) != 1 || ds[0].Kind != tc.kind || ds[0].What != tc.what || ds[0].Fix != tc.fix {
			t.Errorf("%q: denials %+v, want one %s of %q", tc.line, ds, tc.kind, tc.what)
		}
	}
	// With unix sockets allowed, a refused one is not the filter's doing.
	if ds := Denials(Policy{}, config.Sandbox{AllowUnixSockets: true}, []string{"Error: connect EPERM /run/x.sock"}, nil); len(ds) != 0 {
		t.Errorf("allowed: denials %+v", ds)
	}
}
