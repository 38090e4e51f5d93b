package redistest

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// pinEnv names the CPUs (comma-separated numbers) every redis-server the
// helper starts is pinned to. Benchmarks set it, and run the test binary on
// the other CPUs (taskset), so that Redis's own time per command is not
// stretched by the load generator taking its core on a small machine.
const pinEnv = "WAITROOM_REDIS_CPUS"

// pin keeps process pid on the CPUs pinEnv names; unset, it does nothing.
func pin(pid int) error {
	v := os.Getenv(pinEnv)
	if v == "" {
		return nil
	}
	var set unix.CPUSet
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return fmt.Errorf("%s=%q: want CPU numbers separated by commas", pinEnv, v)
		}
		set.Set(n)
	}
	if err := unix.SchedSetaffinity(pid, &set); err != nil {
		return fmt.Errorf("pin redis-server to CPUs %s: %w", v, err)
	}
	return nil
}
