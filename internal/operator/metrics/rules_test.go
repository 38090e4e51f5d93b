package metrics_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/waitroom/waitroom/internal/testkit/tooltest"
)

// TestRecordingRulesCountRoomsOnce runs the documented recording rules
// through promtool: two servers reading one room from Redis count it once,
// while per-server series still sum.
func TestRecordingRulesCountRoomsOnce(t *testing.T) {
	promtool := tooltest.Need(t, "promtool", "Debian's prometheus package")
	out, err := exec.Command(promtool, "test", "rules", filepath.Join("..", "..", "..", "docs", "prometheus", "waitroom.rules_test.yml")).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool: %v\n%s", err, out)
	}
}
