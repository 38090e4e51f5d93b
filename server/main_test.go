package server_test

import (
	"flag"
	"runtime"
	"strconv"
	"testing"

	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestMain runs twice as many tests at once as there are cores, unless
// -parallel says how many: most of this package's tests wait (on pages in
// Chromium, admission ticks, sockets, a killed Redis) rather than compute,
// and one per core left a two-core machine half idle. As the last package
// of ./... it runs alone at the end, so its wall time is the suite's tail.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0)))
	}
	redistest.Main(m)
}
