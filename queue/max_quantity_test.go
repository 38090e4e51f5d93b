package queue_test

import (
	"encoding/json"
	"testing"

	"github.com/waitroom/waitroom/queue"
)

// TestMaxQuantityDefaultAndNoCapSurviveStorage: left out, max_quantity is
// DefaultMaxQuantity; 0 (no cap) is written out, so reading the stored
// JSON over the defaults, as every store does, keeps it 0.
func TestMaxQuantityDefaultAndNoCapSurviveStorage(t *testing.T) {
	s, err := queue.ParseSettings([]byte(`{}`))
	if err != nil || s.MaxQuantity != queue.DefaultMaxQuantity || queue.DefaultMaxQuantity != 4 {
		t.Fatalf("left out: %d %v, want 4", s.MaxQuantity, err)
	}
	for _, want := range []int64{0, 1, 4, 1_000_000} {
		s.MaxQuantity = want
		data, _ := json.Marshal(s)
		got := queue.DefaultSettings()
		if err := json.Unmarshal(data, &got); err != nil || got.MaxQuantity != want {
			t.Errorf("max_quantity %d stored and read back: %d %v", want, got.MaxQuantity, err)
		}
	}
}
