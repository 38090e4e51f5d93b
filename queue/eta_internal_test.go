package queue

import (
	"fmt"
	"testing"
	"time"
)

func TestEstimatorForgetsIdleRooms(t *testing.T) {
	now := time.Now()
	e := NewEstimator()
	s := DefaultSettings()
	for i := range 1000 {
		e.Observe(fmt.Sprintf("room-%d", i), &s, now)
	}
	e.Observe("last", &s, now.Add(11*time.Minute))
	if n := len(e.rooms); n != 1 {
		t.Errorf("%d rooms kept after 11 idle minutes, want 1", n)
	}
}
