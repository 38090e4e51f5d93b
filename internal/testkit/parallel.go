package testkit

import (
	"flag"
	"runtime"
	"strconv"
)

// ParallelPerCore sets -test.parallel to n tests per core, unless the
// command line set it. It is for a TestMain whose tests mostly wait (on
// pages in Chromium, admission ticks, sockets) rather than compute: one
// test per core, go test's default, leaves a two-core machine half idle.
// Call it after flag.Parse.
func ParallelPerCore(n int) {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(n*runtime.GOMAXPROCS(0)))
	}
}
