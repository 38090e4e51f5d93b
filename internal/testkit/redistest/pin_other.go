//go:build !linux

package redistest

// pin does nothing off Linux: the CPU affinity call is Linux's.
func pin(int) error { return nil }
