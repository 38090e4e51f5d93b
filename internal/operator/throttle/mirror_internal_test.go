package throttle

import (
	"testing"
	"time"
)

// TestLateReplyKeepsLocalFailures: failures this server counted on its own
// (calls that timed out while Redis was slow) stay counted when a reply
// from before them arrives: of 5 allowed, 3 counted here and a reply saying
// Redis has 1 leave 2 to try, not 4.
func TestLateReplyKeepsLocalFailures(t *testing.T) {
	l := Limit{N: 5, Per: time.Minute}
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	tab := &local{max: 10, tat: map[string]time.Time{}}
	for i := range 3 {
		if _, ok := tab.check("c", l, 1, now); !ok {
			t.Fatalf("local failure %d refused", i+1)
		}
	}
	tab.mirror("c", now.Add(l.interval()), now) // Redis: one failure
	tried := 0
	for range 10 {
		if _, ok := tab.check("c", l, 1, now); ok {
			tried++
		}
	}
	if tried != 2 {
		t.Fatalf("%d more tried after the late reply, want 2", tried)
	}
}
