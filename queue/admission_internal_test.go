package queue

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// TestTicksNeitherAdmitNorDropWhileDegraded: while degraded the tick lets
// nobody in and drops nobody; after recovery it admits again but drops
// nobody until abandon_after_s has passed, since the waiters' pages could
// not show a sign of life during the outage.
func TestTicksNeitherAdmitNorDropWhileDegraded(t *testing.T) {
	clock := clockwork.NewFakeClock()
	degraded := false
	a := &Admitter{line: &Line{clock: clock}, Degraded: func() bool { return degraded }}
	s := DefaultSettings() // abandon_after_s 30

	if got := a.effective(s); got.Paused || got.AbandonAfterS != 30 {
		t.Fatalf("never degraded: %+v", got)
	}
	degraded = true
	if got := a.effective(s); !got.Paused || got.AbandonAfterS != neverAbandon {
		t.Fatalf("degraded: paused %v, abandon %d", got.Paused, got.AbandonAfterS)
	}
	clock.Advance(5 * time.Minute)
	a.effective(s)
	degraded = false
	clock.Advance(29 * time.Second)
	if got := a.effective(s); got.Paused || got.AbandonAfterS != neverAbandon {
		t.Fatalf("29 s after recovery: paused %v, abandon %d", got.Paused, got.AbandonAfterS)
	}
	clock.Advance(time.Second)
	if got := a.effective(s); got.AbandonAfterS != 30 {
		t.Fatalf("30 s after recovery: abandon %d", got.AbandonAfterS)
	}
}

// TestAnAdmittingTickIsRecordedAtOnceOnlyWhenTheLeaseIsShort: the start of
// an admitting tick goes to the lease with the next renewal (one call a
// round), unless the lease is shorter than two intervals (leaseMax): then a
// holder taking over could tick within an interval of it, and it goes at once.
func TestAnAdmittingTickIsRecordedAtOnceOnlyWhenTheLeaseIsShort(t *testing.T) {
	for _, c := range []struct {
		interval time.Duration
		want     bool
	}{
		{50 * time.Millisecond, false}, {200 * time.Millisecond, false}, {time.Second, false},
		{5 * time.Second, false}, {6 * time.Second, true}, {time.Minute, true},
	} {
		if got := recordAtOnce(LeaseTTL(c.interval), c.interval); got != c.want {
			t.Errorf("interval %s (lease %s): at once %v, want %v", c.interval, LeaseTTL(c.interval), got, c.want)
		}
	}
}
