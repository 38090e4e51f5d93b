package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const childEnv = "REDISTEST_DEATH_CHILD"

// TestDeathSignalChild is the child of TestRedisDiesWithTestBinary: it starts
// a server, says its pid, and waits to be killed.
func TestDeathSignalChild(t *testing.T) {
	if os.Getenv(childEnv) != "1" {
		t.Skip("runs only as the child of TestRedisDiesWithTestBinary")
	}
	s := Start(t)
	fmt.Printf("redis-pid %d\n", s.proc.cmd.Process.Pid)
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // the parent never writes
}

// A test binary killed before its cleanups run (a timeout, SIGKILL) must not
// leave redis-server behind.
func TestRedisDiesWithTestBinary(t *testing.T) {
	if fallback(t) {
		t.Skip("needs redis-server")
	}
	child := exec.Command(os.Args[0], "-test.run=^TestDeathSignalChild$", "-test.count=1")
	child.Env = append(os.Environ(), childEnv+"=1")
	stdin, err := child.StdinPipe() // held open so the child blocks
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()

	pid := 0
	sc := bufio.NewScanner(stdout)
	for pid == 0 && sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "redis-pid "); ok {
			if pid, err = strconv.Atoi(v); err != nil {
				t.Fatalf("child said %q", sc.Text())
			}
		}
	}
	if pid == 0 {
		t.Fatalf("child exited without starting redis: %v", sc.Err())
	}

	// A pidfd becomes readable when its process exits: no polling of /proc.
	pidfd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ENOSYS) {
		t.Skip("kernel has no pidfd_open")
	}
	if err != nil {
		t.Fatalf("redis-server %d is not running: %v", pid, err)
	}
	defer unix.Close(pidfd)

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()

	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 10_000)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatalf("redis-server %d still runs 10s after its test binary was killed", pid)
		}
		return
	}
}
