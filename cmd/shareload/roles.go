package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// attackReport is the attacker's JSON line.
type attackReport struct {
	Role          string         `json:"role"`
	Addr          string         `json:"addr"`
	Workers       int            `json:"workers"`
	Cores         int            `json:"cores"`
	ElapsedS      float64        `json:"elapsed_s"`
	Places        int64          `json:"places"`
	ByState       map[string]int `json:"by_state"`
	Solutions     int64          `json:"solutions"`
	Limited       int64          `json:"limited_429"`
	MaxDifficulty int64          `json:"max_difficulty"`
	SolveS        float64        `json:"solve_s"` // solving time, all workers summed
	// CPUS is the CPU time this process used (user + system): places per
	// CPU second is what an attacker core buys, whatever else shares it.
	CPUS          float64 `json:"cpu_s"`
	PlacesPerCPUS float64 `json:"places_per_cpu_s"`
	Errors        int64   `json:"errors"`
	LastError     string  `json:"last_error,omitempty"`
}

// attack takes places from one address until --duration: a squatter, its
// admitted places never come to checkout.
func attack(ctx context.Context, c config, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, c.Duration)
	defer cancel()
	cl := newClient(c.URL, c.Room, c.Addr)
	rep := attackReport{Role: "attacker", Addr: c.Addr, Workers: c.Workers, Cores: c.Cores, ByState: map[string]int{}}
	var mu sync.Mutex
	var places, sols, limited, errs atomic.Int64
	var solve atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range c.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				p, err := cl.place(ctx, c.Cores)
				sols.Add(int64(p.solutions))
				limited.Add(int64(p.limited))
				solve.Add(int64(p.solving))
				mu.Lock()
				rep.MaxDifficulty = max(rep.MaxDifficulty, p.difficulty)
				if err != nil && ctx.Err() == nil {
					errs.Add(1)
					rep.LastError = err.Error()
				}
				if err == nil {
					places.Add(1)
					rep.ByState[p.State]++
					wg.Add(1)
					go func() { defer wg.Done(); keepAlive(ctx, cl, p) }()
				}
				mu.Unlock()
				if err != nil && ctx.Err() == nil {
					time.Sleep(time.Second) // a refusal that is not a price: do not spin
				}
			}
		}()
	}
	wg.Wait()
	rep.ElapsedS = time.Since(start).Seconds()
	rep.Places, rep.Solutions, rep.Limited, rep.Errors = places.Load(), sols.Load(), limited.Load(), errs.Load()
	rep.SolveS = time.Duration(solve.Load()).Seconds()
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		rep.CPUS = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		if rep.CPUS > 0 {
			rep.PlacesPerCPUS = float64(rep.Places) / rep.CPUS
		}
	}
	fmt.Fprintf(os.Stderr, "attacker %s (%d at once, %d cores each): %d places in %.0f s (%.2f/s), by state %v; %d solutions, max price %d runs, %d answers 429/503, %d errors %s; CPU %.1f s: %.3f places per CPU second\n",
		rep.Addr, rep.Workers, rep.Cores, rep.Places, rep.ElapsedS, float64(rep.Places)/rep.ElapsedS, rep.ByState,
		rep.Solutions, rep.MaxDifficulty, rep.Limited, rep.Errors, rep.LastError, rep.CPUS, rep.PlacesPerCPUS)
	return writeJSON(out, c.JSON, rep)
}

// keepAlive reads a waiting place's ticket every 10 s, as an open page
// would, so that it is not dropped as abandoned (abandon_after_s), until it
// is admitted or ends: the squatter then lets it lapse unused.
func keepAlive(ctx context.Context, cl *client, p placed) {
	for t := p.ticket; t.State == "waiting" || t.State == "scheduled"; {
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Second):
		}
		var err error
		if t, err = cl.read(ctx, p); err != nil {
			return
		}
	}
}

// visitorRecord is one honest visitor's course, times from the run's start.
type visitorRecord struct {
	Addr       string  `json:"addr"`
	EnteredS   float64 `json:"entered_s"` // the place taken (after solving)
	SolveS     float64 `json:"solve_s"`
	Difficulty int64   `json:"difficulty"`
	State      string  `json:"state"`                 // at entry
	DrawnPlace int64   `json:"drawn_place,omitempty"` // a pre-queue place's, read after the draw
	QuotedS    float64 `json:"quoted_s,omitempty"`    // when the first estimate was read
	Position   int64   `json:"position,omitempty"`    // then
	EtaHighS   float64 `json:"eta_high_s,omitempty"`  // then
	AdmittedS  float64 `json:"admitted_s,omitempty"`  // 0: not admitted
	Lapsed     string  `json:"lapsed,omitempty"`      // an ended ticket's reason
	Err        string  `json:"error,omitempty"`
}

// honestReport is the honest side's JSON line, with the shares.
type honestReport struct {
	Role     string  `json:"role"`
	Rate     float64 `json:"rate"`
	Addrs    int     `json:"addrs"`
	ElapsedS float64 `json:"elapsed_s"`
	// At --duration: the room's admissions and, with a scheduled opening,
	// its draw, split between the honest visitors and everyone else.
	AdmittedTotal     int64   `json:"admitted_total"`
	HonestAdmitted    int     `json:"honest_admitted"`
	AttackerAdmitted  int64   `json:"attacker_admitted"`
	AttackerAdmShare  float64 `json:"attacker_admission_share"`
	NoShows           int64   `json:"no_show_total"`
	Drawn             int64   `json:"drawn"`
	HonestDrawn       int     `json:"honest_drawn"`
	AttackerDrawShare float64 `json:"attacker_draw_share"`
	// FirstDrawn is the draw's first places, one for each honest visitor
	// drawn and one more: what an honest share of the draw would be, with
	// the attacker as one more visitor. AttackerFirstDrawn of them went to
	// everyone else (the draw's places no honest visitor holds).
	FirstDrawn         int `json:"first_drawn"`
	AttackerFirstDrawn int `json:"attacker_first_drawn"`
	// The honest visitors' course.
	Visitors      int     `json:"visitors"`
	Placed        int     `json:"placed"`
	SolveP50S     float64 `json:"solve_p50_s"`
	SolveP95S     float64 `json:"solve_p95_s"`
	WaitP50S      float64 `json:"wait_p50_s"` // from the first estimate to admission
	WaitP95S      float64 `json:"wait_p95_s"`
	WaitMaxS      float64 `json:"wait_max_s"`
	AdmittedByEnd int     `json:"admitted_by_end"`
	// Late: admitted (or still waiting at the end) later than the first
	// estimate's eta_high_s plus lateSlack after it was read.
	Late    int             `json:"late"`
	Records []visitorRecord `json:"records,omitempty"`
}

// lateSlack covers what an estimate does not promise: the reading's
// second-by-second polling and the admission tick.
const lateSlack = 5 * time.Second

// honest brings visitors at --rate until --duration, reads the room's
// figures then, and follows the visitors still in line for --settle.
func honest(ctx context.Context, c config, out io.Writer) error {
	admin := newClient(c.URL, c.Room, "127.0.0.1")
	var key struct {
		ShopKey string `json:"shop_key"`
	}
	if err := admin.admin(ctx, c.AdminToken, "/shop-key", &key); err != nil {
		return err
	}
	start := time.Now()
	since := func() float64 { return time.Since(start).Seconds() }
	end := start.Add(c.Duration)
	follow, stop := context.WithDeadline(ctx, end.Add(c.Settle))
	defer stop()

	n := int(c.Rate * c.Duration.Seconds())
	recs := make([]visitorRecord, n)
	first := net.ParseIP(c.Addr).To4()
	clients := make([]*client, c.Addrs)
	for i := range clients {
		ip := net.IPv4(first[0], first[1], first[2], first[3]+byte(i))
		clients[i] = newClient(c.URL, c.Room, ip.String())
	}
	var wg sync.WaitGroup
	for i := range n {
		due := start.Add(time.Duration(float64(i) / c.Rate * float64(time.Second)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Until(due)):
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := clients[i%len(clients)]
			r := &recs[i]
			r.Addr = net.IPv4(first[0], first[1], first[2], first[3]+byte(i%len(clients))).String()
			visit(follow, cl, key.ShopKey, c.Hold, r, since)
		}()
	}

	// The shares at --duration: what the room admitted and drew by then.
	time.Sleep(time.Until(end))
	rep := honestReport{Role: "honest", Rate: c.Rate, Addrs: c.Addrs, Visitors: n}
	var stats struct {
		AdmittedTotal int64 `json:"admitted_total"`
		NoShowTotal   int64 `json:"no_show_total"`
	}
	var draw struct {
		Draw *struct {
			Drawn int64 `json:"drawn"`
		} `json:"draw"`
	}
	statsErr := admin.admin(ctx, c.AdminToken, "/stats", &stats)
	drawErr := admin.admin(ctx, c.AdminToken, "/draw", &draw)
	atEnd := since()
	wg.Wait()
	rep.ElapsedS = since()
	if err := errors.Join(statsErr, drawErr); err != nil {
		return err
	}
	rep.AdmittedTotal, rep.NoShows = stats.AdmittedTotal, stats.NoShowTotal
	var solves, waits []float64
	var drawnPlaces []int64
	for _, r := range recs {
		if r.EnteredS == 0 {
			continue
		}
		rep.Placed++
		solves = append(solves, r.SolveS)
		if r.State == "scheduled" {
			rep.HonestDrawn++
		}
		drawnPlaces = append(drawnPlaces, r.DrawnPlace)
		if r.AdmittedS > 0 && r.AdmittedS <= atEnd {
			rep.HonestAdmitted++
		}
		if r.AdmittedS > 0 {
			rep.AdmittedByEnd++
			if r.QuotedS > 0 {
				waits = append(waits, r.AdmittedS-r.QuotedS)
			}
		}
		if r.QuotedS > 0 {
			done := r.AdmittedS
			if done == 0 {
				done = rep.ElapsedS
			}
			if done-r.QuotedS > r.EtaHighS+lateSlack.Seconds() {
				rep.Late++
			}
		}
	}
	rep.AttackerAdmitted = rep.AdmittedTotal - int64(rep.HonestAdmitted)
	if rep.AdmittedTotal > 0 {
		rep.AttackerAdmShare = float64(rep.AttackerAdmitted) / float64(rep.AdmittedTotal)
	}
	if draw.Draw != nil {
		rep.Drawn = draw.Draw.Drawn
		if rep.Drawn > 0 {
			rep.AttackerDrawShare = float64(rep.Drawn-int64(rep.HonestDrawn)) / float64(rep.Drawn)
		}
		rep.FirstDrawn = int(min(rep.Drawn, int64(rep.HonestDrawn)+1))
		rep.AttackerFirstDrawn = rep.FirstDrawn
		for _, p := range drawnPlaces {
			if p > 0 && p <= int64(rep.FirstDrawn) {
				rep.AttackerFirstDrawn--
			}
		}
	}
	rep.SolveP50S, rep.SolveP95S = pct(solves, 50), pct(solves, 95)
	rep.WaitP50S, rep.WaitP95S, rep.WaitMaxS = pct(waits, 50), pct(waits, 95), pct(waits, 100)
	fmt.Fprintf(os.Stderr, "honest: %d visitors from %d addresses at %.2f/s, %d placed; solve p50 %.2f s p95 %.2f s\n",
		rep.Visitors, rep.Addrs, rep.Rate, rep.Placed, rep.SolveP50S, rep.SolveP95S)
	fmt.Fprintf(os.Stderr, "at %.0f s: admitted %d (honest %d, attacker %d: %.1f%%), no-shows %d; drawn %d (honest %d, attacker %.1f%%); of the first %d drawn, the attacker's %d\n",
		atEnd, rep.AdmittedTotal, rep.HonestAdmitted, rep.AttackerAdmitted, 100*rep.AttackerAdmShare, rep.NoShows,
		rep.Drawn, rep.HonestDrawn, 100*rep.AttackerDrawShare, rep.FirstDrawn, rep.AttackerFirstDrawn)
	fmt.Fprintf(os.Stderr, "honest wait from the first estimate to admission: p50 %.1f s p95 %.1f s max %.1f s; admitted by the end %d of %d; later than eta_high_s+%s: %d\n",
		rep.WaitP50S, rep.WaitP95S, rep.WaitMaxS, rep.AdmittedByEnd, rep.Placed, lateSlack, rep.Late)
	rep.Records = recs
	return writeJSON(out, c.JSON, rep)
}

// visit is one honest visitor: a place at its price, a ticket read a second
// until admitted, then checkout (verify with the shop key), --hold, complete.
func visit(ctx context.Context, cl *client, shopKey string, hold time.Duration, r *visitorRecord, since func() float64) {
	p, err := cl.place(ctx, 1)
	r.SolveS, r.Difficulty = p.solving.Seconds(), p.difficulty
	if err != nil {
		r.Err = err.Error()
		return
	}
	r.EnteredS, r.State = since(), p.State
	t := p.ticket
	for {
		if r.State == "scheduled" && t.State != "scheduled" && r.DrawnPlace == 0 {
			r.DrawnPlace = t.EntryPos // the draw gave the place its entry position
		}
		switch t.State {
		case "waiting":
			if r.QuotedS == 0 && t.EtaHighS != nil {
				r.QuotedS, r.Position, r.EtaHighS = since(), t.Position, *t.EtaHighS
			}
		case "admitted":
			r.AdmittedS = since()
			if r.QuotedS == 0 { // admitted at once
				r.QuotedS = r.AdmittedS
			}
			checkout(ctx, cl, shopKey, t.Token, hold)
			return
		case "scheduled":
		default:
			r.Lapsed = t.State + " " + t.Reason
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		nt, err := cl.read(ctx, p)
		if err != nil {
			if ctx.Err() == nil {
				r.Err = err.Error()
			}
			return
		}
		t = nt
	}
}

// checkout arrives (an authenticated verify, as the shop's middleware
// makes), stays hold, and completes.
func checkout(ctx context.Context, cl *client, shopKey, token string, hold time.Duration) {
	body := map[string]string{"token": token, "room": cl.room}
	if _, err := cl.do(ctx, http.MethodPost, "/api/tokens/verify", "", shopKey, body); err != nil {
		return
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(hold):
	}
	cl.do(ctx, http.MethodPost, "/api/rooms/"+cl.room+"/complete", "", "", map[string]string{"token": token})
}

// pct is the p-th percentile (nearest rank) of xs, 0 for none.
func pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func writeJSON(out io.Writer, on bool, v any) error {
	if !on {
		return nil
	}
	line, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("shareload: encode report: %w", err)
	}
	_, err = fmt.Fprintln(out, string(line))
	return err
}
