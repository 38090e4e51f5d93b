package server_test

import (
	"flag"
	"testing"

	"github.com/waitroom/waitroom/internal/testkit"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestMain runs two tests a core at once: most of this package's tests wait
// (on admission ticks, sockets, a killed Redis) rather than compute. As the
// last package of ./... it runs alone at the end, so its wall time is the
// suite's tail.
func TestMain(m *testing.M) {
	flag.Parse()
	testkit.ParallelPerCore(2)
	redistest.Main(m)
}
