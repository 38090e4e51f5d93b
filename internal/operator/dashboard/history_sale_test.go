package dashboard

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/operator/history"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

// saleMinutes is how long the simulated sale lasts.
const saleMinutes = 36

// TestSaleHistoryTwoServers runs a 36-minute sale on a fake clock against a
// real Redis, sampled by two servers (a sampler and a history store each),
// and checks the report minute by minute against the line's own counters
// read when the minute was recorded: one reading per minute whoever reads
// second, each server's own figures summed, CSV and JSON alike.
func TestSaleHistoryTwoServers(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Shared(t).Client(t)
	prefix := redistest.Prefix(t)
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	// The real time, to the minute: the history's days expire in real time.
	start := time.Now().UTC().Truncate(time.Minute)
	clock := clockwork.NewFakeClockAt(start)
	log := slog.New(slog.DiscardHandler)
	line := queue.NewLine(redisstore.New(rdb, prefix), keys, queue.LineOptions{Clock: clock, Logger: log})
	const room = "sale"
	s := queue.DefaultSettings()
	s.Capacity, s.BatchSize = 8, 4
	s.BotProtection.ProofOfWork = queue.ProofOfWorkOff
	if err := line.PutRoom(ctx, room, s); err != nil {
		t.Fatal(err)
	}

	h1, h2 := history.New(rdb, prefix, 0, log), history.New(rdb, prefix, 0, log)
	degraded2 := false
	server := func(h *history.Store, degraded *bool) *sampler {
		sm := newSampler(samplerConfig{src: line, clock: clock, log: log, every: 2 * time.Second,
			keep: chartSpan, window: 10 * time.Second, hist: h})
		if degraded != nil {
			sm.degraded = func() bool { return *degraded }
		}
		return sm
	}
	one, two := server(h1, nil), server(h2, &degraded2)

	var (
		live    []queue.Stats     // the line's counters when server one read each minute
		waits   [][]time.Duration // the waits of each minute's admissions
		issued  []int64           // challenges counted per minute, both servers
		visitor int
		waiting []queue.Ticket
	)
	enter := func(n int) {
		for range n {
			visitor++
			tk, _, err := line.Enter(ctx, room, fmt.Sprintf("v-%d", visitor))
			if err != nil {
				t.Fatal(err)
			}
			waiting = append(waiting, tk)
		}
	}
	for m := range saleMinutes {
		one.round(ctx)
		st, err := line.Stats(ctx, room, clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, st)
		// Someone arrives between the two servers' readings: a reading
		// of server two's taking the minute would show it.
		enter(1)
		clock.Advance(time.Second)
		degraded2 = m >= 10 && m < 13
		two.round(ctx)

		enter(m%5*3 + 6)
		if m%3 == 0 && len(waiting) > 0 { // the newest gives up
			tk := waiting[len(waiting)-1]
			waiting = waiting[:len(waiting)-1]
			if err := line.Leave(ctx, room, tk.ID, tk.Identity); err != nil {
				t.Fatal(err)
			}
		}
		clock.Advance(20 * time.Second)
		res, err := line.Tick(ctx, room, &s)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range res.Admitted {
			waiting = slices.DeleteFunc(waiting, func(tk queue.Ticket) bool { return tk.ID == id })
		}
		h1.ObserveWaits(room, clock.Now(), res.Waits...) // server one holds the admitter
		waits = append(waits, res.Waits)
		h1.Add(room, clock.Now(), history.ChallengesIssued, int64(m%4))
		h2.Add(room, clock.Now(), history.ChallengesIssued, 2)
		issued = append(issued, int64(m%4)+2)
		clock.Advance(39 * time.Second)
	}
	// Both flush the minute's last additions at their next round.
	one.round(ctx)
	two.round(ctx)
	end, err := line.Stats(ctx, room, clock.Now())
	if err != nil {
		t.Fatal(err)
	}

	from, to, err := h1.Window(ctx, room, "", "", clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !from.Equal(start) {
		t.Fatalf("the whole history starts at %v, want the sale's first minute %v", from, start)
	}
	rep, err := h2.Load(ctx, room, from, to, clock.Now(), func(ctx context.Context) (history.Reading, error) {
		st, err := line.Stats(ctx, room, clock.Now())
		return history.FromStats(st), err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != saleMinutes+1 {
		t.Fatalf("%d minutes in the report, want %d", len(rep.Rows), saleMinutes+1)
	}
	var admitted, peak int64
	for i, row := range rep.Rows[:saleMinutes] {
		at := start.Add(time.Duration(i) * time.Minute)
		next := end
		if i+1 < saleMinutes {
			next = live[i+1]
		}
		want := map[string][2]any{
			"minute":    {row.Minute, at},
			"waiting":   {deref(row.Waiting), live[i].Waiting},
			"active":    {deref(row.Active), live[i].Active},
			"arrivals":  {deref(row.Arrivals), next.EnteredTotal - live[i].EnteredTotal},
			"admitted":  {deref(row.Admitted), next.AdmittedTotal - live[i].AdmittedTotal},
			"abandoned": {deref(row.Abandoned), next.AbandonedTotal - live[i].AbandonedTotal},
			"issued":    {row.ChallengesIssued, issued[i]},
			"degraded":  {row.DegradedSeconds > 0, i >= 10 && i < 13},
		}
		for name, w := range want {
			if w[0] != w[1] {
				t.Errorf("minute %d: %s is %v, want %v", i, name, w[0], w[1])
			}
		}
		admitted += deref(row.Admitted)
		peak = max(peak, live[i].Waiting+live[i].Scheduled)
		checkQuantile(t, fmt.Sprintf("minute %d p95", i), row.WaitP95, waits[i], 0.95)
	}
	if admitted != end.AdmittedTotal || rep.Summary.Admitted != end.AdmittedTotal || admitted == 0 {
		t.Errorf("admitted %d over the minutes, summary %d; the line admitted %d", admitted, rep.Summary.Admitted, end.AdmittedTotal)
	}
	if rep.Summary.Arrivals != end.EnteredTotal || rep.Summary.Abandoned != end.AbandonedTotal {
		t.Errorf("summary: %d arrivals, %d abandoned; the line: %d, %d", rep.Summary.Arrivals, rep.Summary.Abandoned, end.EnteredTotal, end.AbandonedTotal)
	}
	if rep.Summary.PeakLine != peak || rep.Summary.DegradedMinutes != 3 {
		t.Errorf("summary: peak line %d, degraded %d min; want %d, 3", rep.Summary.PeakLine, rep.Summary.DegradedMinutes, peak)
	}
	checkQuantile(t, "whole sale p50", rep.Summary.WaitP50, slices.Concat(waits...), 0.50)

	// CSV and JSON: the same minutes, the same figures.
	var buf bytes.Buffer
	if err := rep.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	compareCSVJSON(t, recs, js)
}

func deref(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// checkQuantile: the report's quantile is the bucket holding the exact
// one, read at its upper bound: no lower, and under 9 % (and a rounding) higher.
func checkQuantile(t *testing.T, what string, got *float64, waits []time.Duration, q float64) {
	t.Helper()
	if len(waits) == 0 {
		if got != nil {
			t.Errorf("%s: %v with no waits", what, *got)
		}
		return
	}
	s := make([]float64, len(waits))
	for i, w := range waits {
		s[i] = w.Seconds()
	}
	slices.Sort(s)
	exact := s[int(math.Ceil(q*float64(len(s))))-1]
	if got == nil || *got < exact-0.05 || *got > exact*1.0905+0.05 {
		t.Errorf("%s: %v, exact %v", what, got, exact)
	}
}

// compareCSVJSON checks every CSV cell against the JSON row's field of the
// column's name (an empty cell for null).
func compareCSVJSON(t *testing.T, recs [][]string, js []byte) {
	t.Helper()
	var rep struct {
		Minutes []map[string]any `json:"minutes"`
	}
	if err := json.Unmarshal(js, &rep); err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(rep.Minutes)+1 || !slices.Equal(recs[0], history.CSVHeader) {
		t.Fatalf("CSV: %d lines, header %v; JSON: %d minutes", len(recs), recs[0], len(rep.Minutes))
	}
	for i, row := range rep.Minutes {
		for j, col := range recs[0] {
			v, ok := row[col]
			if !ok {
				t.Fatalf("JSON minute has no %q", col)
			}
			var want string
			switch x := v.(type) {
			case nil:
			case float64:
				want = strconv.FormatFloat(x, 'f', -1, 64)
			case string:
				want = x
			default:
				t.Fatalf("%s: %T", col, v)
			}
			if recs[i+1][j] != want {
				t.Errorf("minute %d %s: CSV %q, JSON %q", i, col, recs[i+1][j], want)
			}
		}
	}
}
