package metrics_test

import (
	"slices"
	"testing"

	"github.com/waitroom/waitroom/internal/operator/metrics"
)

func TestNamesListEveryFamily(t *testing.T) {
	names := metrics.Names()
	for _, want := range []string{"waitroom_room_waiting", "waitroom_room_capacity", "waitroom_wait_seconds",
		"waitroom_redis_errors_total", "waitroom_kafka_publish_errors_total", "waitroom_gate_upstream_inflight"} {
		if !slices.Contains(names, want) {
			t.Errorf("Names() = %v, lacks %s", names, want)
		}
	}
}
