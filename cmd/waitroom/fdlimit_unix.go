//go:build unix

package main

import (
	"fmt"
	"syscall"
)

// raiseFileLimit sets the soft open-file limit to the hard one (Go's
// runtime may have done so already) and returns the soft limit before and
// after.
func raiseFileLimit() (before, now uint64, _ error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, fmt.Errorf("getrlimit: %w", err)
	}
	before = uint64(rl.Cur)
	if rl.Cur >= rl.Max {
		return before, before, nil
	}
	want := rl
	want.Cur = rl.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
		return before, before, fmt.Errorf("setrlimit %d: %w", want.Cur, err)
	}
	return before, uint64(want.Cur), nil
}
