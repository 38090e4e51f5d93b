package redistest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// redisServer is the binary to run; tests of the fallback point it elsewhere.
var redisServer = "redis-server"

const (
	startAttempts = 5                // tries with a fresh port when another process took it
	readyTimeout  = 10 * time.Second // a loaded CI machine is slow to fork
)

// process is one running redis-server.
type process struct {
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{} // closed once the process has exited and been reaped
}

// startReal starts redis-server on a free port. The port is found by
// listening on port 0 and closing, so another process may take it before
// redis binds: redis then exits, and we try again with a new port.
func startReal(dir string) (*Server, error) {
	var errs []error
	for range startAttempts {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		p, err := startProcess(port, dir)
		if err == nil {
			return &Server{addr: addrOf(port), port: port, dir: dir, proc: p}, nil
		}
		errs = append(errs, err)
		if !errors.Is(err, errExited) {
			break // a timeout would only repeat
		}
	}
	return nil, errors.Join(errs...)
}

func addrOf(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

var errExited = errors.New("redis-server exited")

// startProcess runs redis-server on port without persistence, with extra
// arguments (a cluster node's), and waits until it answers, or fails with
// its output.
func startProcess(port int, dir string, extra ...string) (*process, error) {
	args := []string{
		"--save", "",
		"--appendonly", "no",
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--dir", dir,
		"--loglevel", "warning",
	}
	cmd := exec.Command(redisServer, append(args, extra...)...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := spawn(cmd); err != nil {
		return nil, fmt.Errorf("run %s: %w", redisServer, err)
	}
	p := &process{cmd: cmd, out: out, done: make(chan struct{})}
	if err := pin(cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, err
	}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	if err := p.waitReady(addrOf(port)); err != nil {
		p.kill()
		return nil, fmt.Errorf("%w\n%s", err, strings.TrimSpace(out.String()))
	}
	return p, nil
}

// waitReady polls with a growing pause until this very process answers. It
// checks the pid in INFO because when the port was taken, the process that
// took it may be another test's redis-server and answer PING just as well.
func (p *process) waitReady(addr string) error {
	deadline := time.Now().Add(readyTimeout)
	pause := 2 * time.Millisecond
	var last error
	for {
		select {
		case <-p.done:
			return fmt.Errorf("%w on %s: %s", errExited, addr, p.cmd.ProcessState)
		default:
		}
		pid, err := serverPID(addr)
		if err == nil && pid == p.cmd.Process.Pid {
			return nil
		}
		if err == nil {
			last = fmt.Errorf("%s is served by pid %d, not ours (%d)", addr, pid, p.cmd.Process.Pid)
		} else {
			last = err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s not ready after %v: %w", addr, readyTimeout, last)
		}
		select {
		case <-p.done:
		case <-time.After(pause):
		}
		pause = min(pause*2, 100*time.Millisecond)
	}
}

func (p *process) kill() {
	_ = p.cmd.Process.Kill() // fails only when it has exited already
	<-p.done
}

// serverPID asks the server at addr for its process id with a bare RESP
// INFO, which also proves it answers commands.
func serverPID(addr string) (int, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(time.Second)); err != nil {
		return 0, err
	}
	if _, err := io.WriteString(conn, "INFO server\r\n"); err != nil {
		return 0, err
	}
	r := bufio.NewReader(conn)
	head, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	if !strings.HasPrefix(head, "$") { // -LOADING and the like
		return 0, fmt.Errorf("INFO answered %q", strings.TrimSpace(head))
	}
	n, err := strconv.Atoi(strings.TrimSpace(head[1:]))
	if err != nil || n < 0 || n > 1<<20 {
		return 0, fmt.Errorf("INFO answered %q", strings.TrimSpace(head))
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(body), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, errors.New("INFO has no process_id")
}

// lockedBuffer collects the server's output, which is written by exec's
// copying goroutine and read on failure while the process may still run.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
