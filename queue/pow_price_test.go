package queue

import "testing"

// The documented curve (pow_price.go): base for the first places, gently to
// 2× at a NAT's 100th place, one more base every 8 places after, capped;
// PowPlaces is its inverse.
func TestPowPriceCurve(t *testing.T) {
	bp := BotProtection{ProofOfWork: ProofOfWorkOn, PowCost: 100}
	for _, c := range []struct{ held, want int64 }{
		{0, 100}, {3, 100}, {4, 101}, {98, 198}, {99, 200}, {100, 212}, {107, 300}, {199, 1450}, {999, 11450},
		{PowNATPlaces - 2 + PowSteepPlaces*(PowMaxFactor-2), 100*PowMaxFactor - 13},
		{PowNATPlaces - 1 + PowSteepPlaces*(PowMaxFactor-2), 100 * PowMaxFactor}, {1 << 40, 100 * PowMaxFactor},
	} {
		if got := PowPrice(bp, c.held); got != c.want {
			t.Errorf("PowPrice(%d) = %d, want %d", c.held, got, c.want)
		}
	}
	var total int64
	for k := range int64(1000) {
		p := PowPrice(bp, k)
		total += p
		if k > 0 && p < PowPrice(bp, k-1) {
			t.Fatalf("the price falls at %d", k)
		}
		// Paying place k's price buys places up to k, not k+1 when that costs more.
		if n := PowPlaces(bp, p); n < k+1 || PowPrice(bp, n) <= p {
			t.Fatalf("PowPlaces(%d) = %d at place %d", p, n, k)
		}
	}
	// 1,000 places from one network: about 52,600 first places' work.
	if total < 52_000*100 || total > 53_000*100 {
		t.Errorf("1,000 places cost %d runs", total)
	}
	if PowPlaces(bp, 99) != 0 || PowPlaces(bp, 100*PowMaxFactor) != powUnlimited {
		t.Error("below the base nothing; at the cap everything")
	}
}
