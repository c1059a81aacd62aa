package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter closes what the namespaces leave open. A unix
// socket is reached through the filesystem, not the network namespace,
// so under any network a server could connect to the system D-Bus, nscd
// or resolved wherever the sandbox shows their sockets; a nested user
// namespace gives it back the capabilities to remount what bubblewrap
// hid; and a server that can trace or read the memory of the
// bridge, which runs unfiltered beside it, has the bridge's rights.
//
// It is classic BPF assembled here, without cgo or libseccomp, for amd64
// and arm64; on other architectures the sandbox runs without it (bwrap's
// own --disable-userns, where it has one, still refuses nested user
// namespaces there).

// seccompArch is what the filter needs of an architecture: the audit
// arch its system calls are tagged with, and the numbers of the ones it
// looks at.
type seccompArch struct {
	audit uint32
	// x32: the x32 ABI's calls (on amd64, the number with bit 30 set)
	// share the native audit arch and have numbers of their own: refused.
	x32                       bool
	unshare, clone, clone3    uint32
	socket, ioUringSetup      uint32
	ptrace, vmReadv, vmWritev uint32
	setns                     uint32
}

// seccompArches, by GOARCH; the numbers are the kernel's (a test checks
// them against golang.org/x/sys/unix on the architecture it runs on).
var seccompArches = map[string]seccompArch{
	"amd64": {
		audit: 0xc000003e, x32: true, // AUDIT_ARCH_X86_64
		unshare: 272, clone: 56, clone3: 435, socket: 41, ioUringSetup: 425,
		ptrace: 101, vmReadv: 310, vmWritev: 311, setns: 308,
	},
	"arm64": {
		audit:   0xc00000b7, // AUDIT_ARCH_AARCH64
		unshare: 97, clone: 220, clone3: 435, socket: 198, ioUringSetup: 425,
		ptrace: 117, vmReadv: 270, vmWritev: 271, setns: 268,
	},
}

const x32Bit = 0x40000000 // __X32_SYSCALL_BIT

// Offsets in struct seccomp_data: the call's number, its audit arch, and
// the low 32 bits of its first argument (both architectures are little
// endian). The kernel reads clone's and unshare's flags, and socket's
// domain, as 32-bit ints: the high half cannot hide a flag.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
)

// bpfInsn is an instruction of the program as it is written: a jump
// names the labels it goes to ("" is the next instruction).
type bpfInsn struct {
	label  string
	code   uint16
	k      uint32
	jt, jf string
}

// seccompProgram is the filter for arch (a GOARCH); nil where there is
// none. allowUnix leaves socket(AF_UNIX) alone.
//
//	wrong audit arch (i386 through int 0x80), x32     ENOSYS
//	unshare, clone with CLONE_NEWUSER in the flags     EPERM
//	clone3 (its flags are behind a pointer)            ENOSYS: glibc falls back to clone
//	io_uring_setup (its ops bypass the filter)         ENOSYS
//	ptrace, process_vm_readv, process_vm_writev        EPERM: the bridge is out of reach
//	setns                                              EPERM
//	socket(AF_UNIX, …), unless allowUnix               EPERM
//	anything else, socketpair included                 allowed
func seccompProgram(arch string, allowUnix bool) []unix.SockFilter {
	a, ok := seccompArches[arch]
	if !ok {
		return nil
	}
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
	)
	p := []bpfInsn{
		{code: ld, k: offArch},
		{code: jeq, k: a.audit, jf: "enosys"},
		{code: ld, k: offNr},
	}
	if a.x32 {
		p = append(p, bpfInsn{code: jge, k: x32Bit, jt: "enosys"})
	}
	p = append(p,
		bpfInsn{code: jeq, k: a.unshare, jt: "flags"},
		bpfInsn{code: jeq, k: a.clone, jt: "flags"},
		bpfInsn{code: jeq, k: a.clone3, jt: "enosys"},
		bpfInsn{code: jeq, k: a.ioUringSetup, jt: "enosys"},
		bpfInsn{code: jeq, k: a.ptrace, jt: "eperm"},
		bpfInsn{code: jeq, k: a.vmReadv, jt: "eperm"},
		bpfInsn{code: jeq, k: a.vmWritev, jt: "eperm"},
		bpfInsn{code: jeq, k: a.setns, jt: "eperm"},
	)
	if !allowUnix {
		p = append(p, bpfInsn{code: jeq, k: a.socket, jt: "domain"})
	}
	p = append(p,
		bpfInsn{code: ret, k: unix.SECCOMP_RET_ALLOW},
		bpfInsn{label: "flags", code: ld, k: offArg0},
		bpfInsn{code: jset, k: unix.CLONE_NEWUSER, jt: "eperm", jf: "allow"},
	)
	if !allowUnix {
		p = append(p,
			bpfInsn{label: "domain", code: ld, k: offArg0},
			bpfInsn{code: jeq, k: unix.AF_UNIX, jt: "eperm", jf: "allow"},
		)
	}
	// Jumps go forward only: the returns come last.
	p = append(p,
		bpfInsn{label: "allow", code: ret, k: unix.SECCOMP_RET_ALLOW},
		bpfInsn{label: "eperm", code: ret, k: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		bpfInsn{label: "enosys", code: ret, k: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
	)
	return assemble(p)
}

// assemble resolves the labels of p into classic BPF's relative, forward
// jumps.
func assemble(p []bpfInsn) []unix.SockFilter {
	at := map[string]int{}
	for i, in := range p {
		if in.label != "" {
			at[in.label] = i
		}
	}
	off := func(i int, label string) uint8 {
		if label == "" {
			return 0
		}
		t, ok := at[label]
		if !ok || t <= i || t-i-1 > 255 {
			panic(fmt.Sprintf("seccomp: instruction %d jumps to %q, which is not a label ahead within reach", i, label))
		}
		return uint8(t - i - 1)
	}
	out := make([]unix.SockFilter, len(p))
	for i, in := range p {
		out[i] = unix.SockFilter{Code: in.code, Jt: off(i, in.jt), Jf: off(i, in.jf), K: in.k}
	}
	return out
}

// installSeccomp puts the filter on this process, every thread of it
// (TSYNC), and so on whatever it executes next. The calling goroutine
// must be locked to its thread: no_new_privs is a thread's, and it is
// this thread that executes the server.
func installSeccomp(allowUnix bool) error {
	prog := seccompProgram(runtime.GOARCH, allowUnix)
	if prog == nil {
		return nil
	}
	// Without no_new_privs an unprivileged process may not install a
	// filter; bubblewrap sets it already, this does not rely on that.
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", e)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, e := syscall.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if e != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", e)
	}
	if r != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): thread %d could not take the filter", r)
	}
	return nil
}

// execFiltered is the exec stub (execArg): args are its flags, "--" and
// the server's argv. It installs the filter and becomes the server, found
// on the PATH as bubblewrap would have found it.
func execFiltered(args []string) int {
	allowUnix := false
	for len(args) > 0 && args[0] != "--" {
		if args[0] != allowUnixFlag {
			fmt.Fprintf(os.Stderr, "freecode sandbox: the exec stub's unknown flag %q\n", args[0])
			return 126
		}
		allowUnix = true
		args = args[1:]
	}
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "freecode sandbox: the exec stub has no command")
		return 126
	}
	argv := args[1:]
	prog, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "freecode sandbox:", err)
		return 127
	}
	runtime.LockOSThread()
	if err := installSeccomp(allowUnix); err != nil {
		fmt.Fprintln(os.Stderr, "freecode sandbox: the system call filter:", err)
		return 126
	}
	err = syscall.Exec(prog, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "freecode sandbox: exec %s: %v\n", prog, err)
	return 126
}

// bwrapDisablesUserns reports whether the bubblewrap at path can refuse
// nested user namespaces itself (--disable-userns, bubblewrap 0.8 and
// later: its --help lists it), asked once per process. A setuid bwrap
// cannot, and is not asked.
func bwrapDisablesUserns(path string) bool {
	bwrapUsernsOnce.Do(func() {
		if fi, err := os.Stat(path); err != nil || fi.Mode()&os.ModeSetuid != 0 {
			return
		}
		out, _ := exec.Command(path, "--help").Output()
		bwrapUserns = bytes.Contains(out, []byte("--disable-userns"))
	})
	return bwrapUserns
}

var (
	bwrapUsernsOnce sync.Once
	bwrapUserns     bool // set once, by bwrapUsernsOnce
)
