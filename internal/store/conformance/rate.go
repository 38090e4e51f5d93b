package conformance

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// testAdmittedRateIsMeasured: admitted_rate is what the line admitted over
// the last minute, never the configured pace: 0 while nobody is admitted
// (a paused room, or a store that lost its data), and the admissions over
// the time they span once someone is.
func testAdmittedRateIsMeasured(t *testing.T, open Open) {
	f := newFixture(t, open, nil)
	ctx := context.Background()
	f.room(t, "sale", func(s *queue.Settings) { s.Paused = true; s.BatchSize = 5 })
	for i := range 3 {
		f.enter(t, "sale", fmt.Sprintf("v:r%d", i))
	}
	f.tick(t, "sale")
	st, err := f.store.Stats(ctx, "sale", f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if st.AdmittedRate != 0 {
		t.Fatalf("paused, nobody admitted: admitted_rate %v, want 0", st.AdmittedRate)
	}
	f.room(t, "sale", func(s *queue.Settings) { s.BatchSize = 5 })
	f.clock.Advance(time.Second)
	if r := f.tick(t, "sale"); len(r.Admitted) != 3 {
		t.Fatalf("admitted %d, want 3", len(r.Admitted))
	}
	st, err = f.store.Stats(ctx, "sale", f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if st.AdmittedRate <= 0 || st.AdmittedRate > 3/0.2 { // 3 over at least one interval (200 ms)
		t.Fatalf("after 3 admissions: admitted_rate %v", st.AdmittedRate)
	}
}
