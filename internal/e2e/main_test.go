package e2e_test

import (
	"flag"
	"testing"

	"github.com/waitroom/waitroom/internal/testkit"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestMain runs two tests a core at once: the scripts mostly wait on pages
// in the one shared Chromium.
func TestMain(m *testing.M) {
	flag.Parse()
	testkit.ParallelPerCore(2)
	redistest.Main(m)
}
