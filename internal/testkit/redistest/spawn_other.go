//go:build !linux

package redistest

import "os/exec"

// spawn starts cmd. Only Linux can tie the child's life to the test binary;
// elsewhere a test binary killed before its cleanups leaves redis running.
func spawn(cmd *exec.Cmd) error { return cmd.Start() }
