package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestMaxInWindowSlides(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	var ts []time.Time
	// One batch of 10 every 200 ms on 200 ms buckets...
	for b := range 10 {
		for range 10 {
			ts = append(ts, t0.Add(time.Duration(b)*200*time.Millisecond))
		}
	}
	if most, over := maxInWindow(ts, time.Second, 60); most != 50 || over != 0 {
		t.Errorf("steady pace: most %d over %d, want 50 and 0", most, over)
	}
	// ...and a second admitter ticking 3 ms later in the next bucket: two
	// batches where one was due, which bucket counts do not show.
	for range 10 {
		ts = append(ts, t0.Add(403*time.Millisecond))
	}
	most, over := maxInWindow(ts, time.Second, 60)
	if most != 60 {
		t.Errorf("double tick: most %d, want 60", most)
	}
	if over != 0 {
		t.Errorf("double tick: %d windows over 60, want 0", over)
	}
	if most, _ := maxInWindow(nil, time.Second, 1); most != 0 {
		t.Errorf("no admissions: most %d", most)
	}
}

func TestPaceSplitsAtTheKill(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	var ev []admitEvent
	for i := range 20 {
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		ev = append(ev, admitEvent{at: at, heard: at.Add(5 * time.Millisecond), reconnected: i >= 15})
	}
	// A reconnecting waiter hears of it late, all at once: not in the heard count.
	for i := 15; i < 20; i++ {
		ev[i].heard = t0.Add(5 * time.Second)
	}
	r := pace(ev, t0.Add(time.Second), 1, 100*time.Millisecond)
	if r.ConfiguredPerS != 10 || r.OneAdmitterBound != 11 {
		t.Errorf("configured %v bound %d, want 10 and 11", r.ConfiguredPerS, r.OneAdmitterBound)
	}
	if r.Before.Admissions != 10 || r.After == nil || r.After.Admissions != 10 {
		t.Fatalf("split = %+v / %+v, want 10 and 10", r.Before, r.After)
	}
	if r.After.MaxIn1s != 10 || r.After.MaxIn1sHeard != 5 {
		t.Errorf("after: most %d by admission, %d heard; want 10 and 5", r.After.MaxIn1s, r.After.MaxIn1sHeard)
	}
	if r.Before.MeanPerS < 9.9 || r.Before.MeanPerS > 10.1 {
		t.Errorf("mean %v/s, want 10", r.Before.MeanPerS)
	}
}

func TestParseConfigServersStagesKill(t *testing.T) {
	c, err := parseConfig([]string{"--url", "http://127.0.0.1:9,http://127.0.0.2:10/", "--stages", "10,50,100",
		"--server-pid", "11,12", "--kill-pid", "12", "--kill-after", "5s", "--duration", "10s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.URLs) != 2 || c.URLs[1] != "http://127.0.0.2:10" || c.URL != c.URLs[0] || c.Conns != 100 || c.MaxVisitors != 300 || len(c.ServerPIDs) != 2 {
		t.Errorf("config = %+v", c)
	}
	for _, args := range [][]string{
		{"--url", "http://127.0.0.1:9,http://10.0.0.1:9"},
		{"--stages", "50,10"},
		{"--stages", "10,10"},
		{"--stages", "10,x"},
		{"--stages", "0"},
		{"--server-pid", "11", "--kill-pid", "11", "--kill-after", "1s"},    // nobody to take over
		{"--server-pid", "11,12", "--kill-pid", "13", "--kill-after", "1s"}, // not a server
		{"--server-pid", "11,12", "--kill-pid", "12", "--kill-after", "2m"}, // after the window
		{"--server-pid", "11,12", "--kill-pid", "12"},                       // when?
		{"--conns", "200001"},
	} {
		if _, err := parseConfig(args, io.Discard); err == nil {
			t.Errorf("parseConfig(%q) = nil error", args)
		}
	}
}

func TestTrackerTakeStartsAfresh(t *testing.T) {
	tr := newTracker()
	t0 := time.Now()
	tr.setMovingSince(t0)
	w := &waiter{}
	s := t0.UTC().Format(time.RFC3339Nano)
	tr.observe(w, ticketMsg{State: "waiting", NextUpdateMS: 1000}, t0, phaseWindow)
	tr.observe(w, ticketMsg{State: "admitted", OrderableAt: &s}, t0.Add(time.Second), phaseWindow)
	old := tr.take()
	if len(old.admits) != 1 || len(old.admit[phaseWindow]) != 1 || old.msgs[phaseWindow] != 2 {
		t.Errorf("taken: %d admits, %v, %d msgs", len(old.admits), old.admit[phaseWindow], old.msgs[phaseWindow])
	}
	if len(tr.admits) != 0 || len(tr.admit[phaseWindow]) != 0 || tr.msgs[phaseWindow] != 0 || tr.movingSince != t0 {
		t.Errorf("not afresh: %d admits, %d msgs, moving %v", len(tr.admits), tr.msgs[phaseWindow], tr.movingSince)
	}
	// A reconnected waiter's admission counts for the pace, not the latency.
	w2 := &waiter{reconnected: true}
	tr.observe(w2, ticketMsg{State: "admitted", OrderableAt: &s}, t0.Add(9*time.Second), phaseWindow)
	if len(tr.admits) != 1 || len(tr.admit[phaseWindow]) != 0 {
		t.Errorf("reconnected admission: %d admits, latency %v", len(tr.admits), tr.admit[phaseWindow])
	}
}

func FuzzParseInts(f *testing.F) {
	for _, s := range []string{"", "1", "10000,50000,100000", " 3 , 4", "0", "-1", "1,,2", "x", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, err := parseInts(s)
		if err != nil {
			return
		}
		for _, n := range ns {
			if n < 1 {
				t.Fatalf("parseInts(%q) = %v: holds %d", s, ns, n)
			}
		}
		if s != "" && len(ns) != strings.Count(s, ",")+1 {
			t.Fatalf("parseInts(%q) = %v: want one number per field", s, ns)
		}
	})
}
