package queue_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/store/memstore"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// draws is how many openings the uniformity test draws: enough that the
// naive shuffle's bias (expected chi-square about 179) is far above the
// threshold, which a fair draw passes with probability 1 - 3e-8.
const draws = 6000

// TestDrawIsAUniformPermutation runs many openings of four entrants through
// the real path (Enter before opens_at, Tick after it, positions read back)
// and tests the drawn orders against uniform: chi-square over the 24 orders
// and over who comes first. The thresholds are far in the tail (a fair draw
// fails them about once in 10^8 runs) yet a biased shuffle, such as the
// naive swap-with-any, lands well above them.
func TestDrawIsAUniformPermutation(t *testing.T) {
	const entrants = 4
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := clockwork.NewFakeClockAt(t0)
	store := memstore.New()
	line := queue.NewLine(store, nil, queue.LineOptions{Clock: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx := context.Background()
	orders := map[string]int{}
	first := make([]int, entrants)
	for d := 0; d < draws; d++ {
		room := fmt.Sprintf("r%d", d)
		opens := clock.Now().Add(time.Second)
		s := queue.DefaultSettings()
		s.OpensAt, s.Paused = &opens, true
		if err := line.PutRoom(ctx, room, s); err != nil {
			t.Fatal(err)
		}
		tickets := make([]queue.Ticket, entrants)
		for i := range tickets {
			tk, _, err := line.Enter(ctx, room, fmt.Sprintf("v:%d", i))
			if err != nil || tk.State != vocab.StateScheduled {
				t.Fatalf("enter: %+v %v", tk, err)
			}
			tickets[i] = tk
		}
		clock.Advance(time.Second)
		if _, err := line.Tick(ctx, room, &s); err != nil {
			t.Fatal(err)
		}
		order := make([]int, entrants)
		for i, tk := range tickets {
			got, _, err := line.Status(ctx, room, tk.ID, tk.Identity)
			if err != nil || got.Position < 1 || got.Position > entrants {
				t.Fatalf("after the draw: %+v %v", got, err)
			}
			order[got.Position-1] = i
		}
		orders[fmt.Sprint(order)]++
		first[order[0]]++
	}
	if len(orders) != 24 {
		t.Fatalf("%d distinct orders in %d draws, want all 24", len(orders), draws)
	}
	counts := make([]int, 0, 24)
	for _, n := range orders {
		counts = append(counts, n)
	}
	if chi := chiSquare(counts, draws); chi > 80 { // 23 degrees of freedom
		t.Errorf("orders: chi-square %.1f > 80 (counts %v)", chi, orders)
	}
	if chi := chiSquare(first, draws); chi > 40 { // 3 degrees of freedom
		t.Errorf("first place: chi-square %.1f > 40 (counts %v)", chi, first)
	}
	t.Logf("%d draws: %d orders, min %d max %d (expected %d), chi-square %.1f; first place %v",
		draws, len(orders), slices.Min(counts), slices.Max(counts), draws/24, chiSquare(counts, draws), first)
}

// chiSquare is Pearson's statistic of counts against a uniform split of total.
func chiSquare(counts []int, total int) float64 {
	want := float64(total) / float64(len(counts))
	var chi float64
	for _, n := range counts {
		d := float64(n) - want
		chi += d * d / want
	}
	return chi
}

// TestChiSquareCatchesABiasedShuffle makes sure the test above can fail:
// the naive shuffle (swap each place with any place) is biased for four.
func TestChiSquareCatchesABiasedShuffle(t *testing.T) {
	orders := map[string]int{}
	// Every one of the 4^4 swap sequences once: the naive shuffle's exact
	// distribution, scaled to the test's number of draws.
	for seq := 0; seq < 256; seq++ {
		p := []int{0, 1, 2, 3}
		for i, r := 0, seq; i < 4; i, r = i+1, r/4 {
			j := r % 4
			p[i], p[j] = p[j], p[i]
		}
		orders[fmt.Sprint(p)]++
	}
	counts := make([]int, 0, 24)
	for _, n := range orders {
		counts = append(counts, n*draws/256)
	}
	if chi := chiSquare(counts, draws); chi <= 80 {
		t.Fatalf("naive shuffle: chi-square %.1f, the threshold 80 would not catch it", chi)
	} else {
		t.Logf("naive shuffle: chi-square %.1f", chi)
	}
}

// TestShuffleKeepsEveryoneOnce: a permutation, and the hash names the order.
func TestShuffleKeepsEveryoneOnce(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e", "f", "g"}
	got, err := queue.Shuffle(ids)
	if err != nil {
		t.Fatal(err)
	}
	sorted := slices.Clone(got)
	slices.Sort(sorted)
	if !slices.Equal(sorted, ids) {
		t.Fatalf("shuffle %v is not a permutation of %v", got, ids)
	}
	if queue.OrderHash(ids) == queue.OrderHash([]string{"b", "a", "c", "d", "e", "f", "g"}) {
		t.Fatal("two orders hash alike")
	}
	if empty, _ := queue.Shuffle(nil); len(empty) != 0 {
		t.Fatalf("shuffle of nothing: %v", empty)
	}
}

// TestDrawOrderTakesOnePlaceANetworkARound: every drawn order is in
// rounds (each network's first place, then each one's second, ...), a place
// with no network is one of its own, and the draw within the rounds is
// uniform: who comes first among the first round's five networks, and
// which of a network's places is its first (chi-square far in the tail, as
// above).
func TestDrawOrderTakesOnePlaceANetworkARound(t *testing.T) {
	places := []queue.PreQueued{
		{ID: "a1", Network: "A"}, {ID: "b1", Network: "B"}, {ID: "a2", Network: "A"},
		{ID: "c1", Network: "C"}, {ID: "u1"}, {ID: "a3", Network: "A"}, {ID: "b2", Network: "B"}, {ID: "u2"},
	}
	net := map[string]string{}
	for _, p := range places {
		net[p.ID] = p.Network
		if p.Network == "" {
			net[p.ID] = p.ID
		}
	}
	first := map[string]int{} // the first round's first place, by network
	aFirst := map[string]int{}
	for d := 0; d < draws; d++ {
		order, err := queue.DrawOrder(places)
		if err != nil {
			t.Fatal(err)
		}
		if len(order) != len(places) {
			t.Fatalf("order %v of %d places", order, len(places))
		}
		// Rounds: 5 networks, then A and B, then A.
		for _, r := range []struct {
			from, to int
			nets     string
		}{{0, 5, "ABCu1u2"}, {5, 7, "AB"}, {7, 8, "A"}} {
			got := []string{}
			for _, id := range order[r.from:r.to] {
				got = append(got, net[id])
			}
			slices.Sort(got)
			if strings.Join(got, "") != r.nets {
				t.Fatalf("order %v: places %d..%d are of %v, want one each of %s", order, r.from, r.to, got, r.nets)
			}
		}
		first[net[order[0]]]++
		for _, id := range order[:5] {
			if net[id] == "A" {
				aFirst[id]++
			}
		}
	}
	counts := func(m map[string]int, keys ...string) []int {
		var out []int
		for _, k := range keys {
			out = append(out, m[k])
		}
		return out
	}
	if chi := chiSquare(counts(first, "A", "B", "C", "u1", "u2"), draws); chi > 40 { // 4 degrees of freedom
		t.Errorf("first place by network %v: chi-square %.1f > 40", first, chi)
	}
	if chi := chiSquare(counts(aFirst, "a1", "a2", "a3"), draws); chi > 40 { // 2 degrees of freedom
		t.Errorf("network A's first place %v: chi-square %.1f > 40", aFirst, chi)
	}
}

// TestClearingOrAdvancingTheOpeningDrawsThePreQueue: an operator who clears
// opens_at (the dashboard's "empty means open now") or moves it earlier gets
// the pre-queue drawn at the next tick, ahead of anyone who came after. A
// cleared opening used to strand them: no opening, no draw.
func TestClearingOrAdvancingTheOpeningDrawsThePreQueue(t *testing.T) {
	for _, tc := range []struct {
		name string
		move func(s *queue.Settings, now time.Time)
	}{
		{"cleared", func(s *queue.Settings, _ time.Time) { s.OpensAt = nil }},
		{"moved earlier", func(s *queue.Settings, now time.Time) { at := now.Add(-time.Second); s.OpensAt = &at }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
			clock := clockwork.NewFakeClockAt(t0)
			line := queue.NewLine(memstore.New(), nil, queue.LineOptions{Clock: clock, Logger: slog.New(slog.DiscardHandler)})
			ctx := context.Background()
			s := queue.DefaultSettings()
			opens := t0.Add(time.Hour)
			s.OpensAt, s.Paused = &opens, true
			if err := line.PutRoom(ctx, "r", s); err != nil {
				t.Fatal(err)
			}
			var early []queue.Ticket
			for i := range 3 {
				tk, _, err := line.Enter(ctx, "r", fmt.Sprintf("v:%d", i))
				if err != nil || tk.State != vocab.StateScheduled {
					t.Fatalf("enter before the opening: %+v %v", tk, err)
				}
				early = append(early, tk)
			}
			clock.Advance(time.Minute)
			tc.move(&s, clock.Now())
			if err := line.PutRoom(ctx, "r", s); err != nil {
				t.Fatal(err)
			}
			stored, err := line.StoredSettings(ctx, "r")
			if err != nil {
				t.Fatal(err)
			}
			if stored.Scheduled(clock.Now()) {
				t.Fatalf("still scheduled after the change: opens_at %v", stored.OpensAt)
			}
			late, _, err := line.Enter(ctx, "r", "v:late")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := line.Tick(ctx, "r", &stored); err != nil {
				t.Fatal(err)
			}
			seen := map[int64]bool{}
			for _, tk := range early {
				got, _, err := line.Status(ctx, "r", tk.ID, tk.Identity)
				if err != nil || got.Position < 1 || got.Position > int64(len(early)) {
					t.Fatalf("a pre-queue visitor after the change: %+v %v", got, err)
				}
				seen[got.Position] = true
			}
			if len(seen) != len(early) {
				t.Fatalf("pre-queue places %v, want 1..%d once each", seen, len(early))
			}
			got, _, err := line.Status(ctx, "r", late.ID, late.Identity)
			if err != nil || got.Position != int64(len(early))+1 {
				t.Fatalf("the later arrival: %+v %v, want place %d behind the draw", got, err, len(early)+1)
			}
		})
	}
}
