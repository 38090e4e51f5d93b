package metrics_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestRecordingRulesCountRoomsOnce runs the documented recording rules
// through promtool: two servers reading one room from Redis count it once,
// while per-server series still sum.
func TestRecordingRulesCountRoomsOnce(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("WAITROOM_REQUIRE_PROMTOOL") != "" {
			t.Fatal("promtool is not installed")
		}
		t.Skip("promtool is not installed")
	}
	out, err := exec.Command(promtool, "test", "rules", filepath.Join("..", "..", "..", "docs", "prometheus", "waitroom.rules_test.yml")).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool: %v\n%s", err, out)
	}
}
