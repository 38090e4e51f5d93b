package redistest

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// spawn starts cmd so that the kernel kills it when the test binary dies,
// however it dies (a timeout panic, SIGKILL), and no redis-server outlives it.
//
// Pdeathsig fires when the thread that forked the child exits, not the
// process, and Go may end threads; so every fork happens on one goroutine
// locked to its thread for the life of the process.
func spawn(cmd *exec.Cmd) error {
	spawnerOnce.Do(func() {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for r := range spawnRequests {
				r.result <- r.cmd.Start()
			}
		}()
	})
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	result := make(chan error, 1)
	spawnRequests <- spawnRequest{cmd: cmd, result: result}
	return <-result
}

type spawnRequest struct {
	cmd    *exec.Cmd
	result chan error
}

var (
	spawnerOnce   sync.Once
	spawnRequests = make(chan spawnRequest)
)
