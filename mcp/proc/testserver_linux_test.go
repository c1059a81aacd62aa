package proc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func runTestServer(args []string) int {
	if len(args) != 1 {
		return 2
	}
	arg := args[0]
	child := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "child")
		cmd.Env = os.Environ()
		cmd.Stderr = os.Stderr
		return cmd
	}
	switch {
	case arg == "child":
		signal.Ignore(syscall.SIGTERM)
	case arg == "fork":
		cmd := child()
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fork:", err)
			return 1
		}
		signal.Ignore(syscall.SIGTERM)
		fmt.Println(cmd.Process.Pid)
	case len(arg) > len("detach=") && arg[:len("detach=")] == "detach=":
		cmd := child()
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "detach:", err)
			return 1
		}
		if err := os.WriteFile(arg[len("detach="):], []byte(strconv.Itoa(cmd.Process.Pid)), 0o600); err != nil {
			return 1
		}
		return 0
	case len(arg) > len("escape=") && arg[:len("escape=")] == "escape=":
		cmd := exec.Command(os.Args[0], "detach="+arg[len("escape="):])
		cmd.Env = os.Environ()
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "escape:", err)
			return 1
		}
		// The daemon's parent has exited: the daemon is adopted by the
		// nearest subreaper, the FreeCode process that started this one.
		fmt.Println("ready")
	default:
		return 2
	}
	time.Sleep(time.Hour) // until stopped or killed
	return 0
}

func runTestOwner(dir string) int {
	if err := ReapOrphans(dir, nil); err != nil {
		fmt.Fprintln(os.Stderr, "owner:", err)
		return 1
	}
	exe, err := os.Executable()
	if err != nil {
		return 1
	}
	file := os.Getenv(testOwnerEscapeEnv)
	arg := "fork"
	if file != "" {
		arg = "escape=" + file
	}
	p, err := Start(Command{
		Argv:   []string{exe, arg},
		Env:    append(os.Environ(), testServerEnv+"=1"),
		Stderr: func(line string) { fmt.Fprintln(os.Stderr, "server:", line) },
	}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "owner:", err)
		return 1
	}
	line, err := bufio.NewReader(p.Stdout()).ReadString('\n')
	if err != nil {
		fmt.Fprintln(os.Stderr, "owner: the server said", line, err)
		return 1
	}
	other := line[:len(line)-1] // fork: the child's pid
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintln(os.Stderr, "owner:", err)
			return 1
		}
		other = string(b)
		RecordAdopted()
	}
	fmt.Printf("ready %d %s\n", p.PID(), other)
	time.Sleep(time.Hour) // until the test kills it
	return 0
}
