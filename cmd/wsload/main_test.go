package main

import (
	"bufio"
	"io"
	"strings"
	"testing"
	"time"
)

func TestParseConfigRefusesNonLoopback(t *testing.T) {
	for _, args := range [][]string{
		{"--url", "http://10.0.0.1:8080"},
		{"--url", "http://8.8.8.8"},
		{"--url", "https://127.0.0.1:8080"},
		{"--redis-addr", "10.1.2.3:6379"},
		{"--conns", "0"},
		{"--conns", "100", "--max-visitors", "50"},
		{"--duration", "1h"},
	} {
		if _, err := parseConfig(args, io.Discard); err == nil {
			t.Errorf("parseConfig(%q) = nil error", args)
		}
	}
	c, err := parseConfig([]string{"--url", "http://127.0.0.1:9/", "--conns", "10", "--redis-addr", "127.0.0.1:6379"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.URL != "http://127.0.0.1:9" || c.MaxVisitors != 30 {
		t.Errorf("config = %+v", c)
	}
}

func TestObserveLatenessAndAdmission(t *testing.T) {
	tr := newTracker()
	t0 := time.Now()
	tr.setMovingSince(t0)
	w := &waiter{}
	msg := func(state string, pos, next int64) ticketMsg {
		return ticketMsg{State: state, Position: pos, NextUpdateMS: next}
	}
	tr.observe(w, msg("waiting", 900, 10000), t0.Add(10*time.Millisecond), phaseWindow)
	// 10.3 s later: 300 ms beyond the 10 s promise (the gap counts from the last message).
	tr.observe(w, msg("waiting", 400, 5000), t0.Add(10310*time.Millisecond), phaseWindow)
	// Sooner than the 5 s promise: early, lateness 0.
	tr.observe(w, msg("waiting", 300, 5000), t0.Add(12310*time.Millisecond), phaseWindow)
	at := t0.Add(13 * time.Second).UTC()
	s := at.Format("2006-01-02T15:04:05.000Z07:00")
	if final := tr.observe(w, ticketMsg{State: "admitted", OrderableAt: &s}, at.Add(40*time.Millisecond), phaseWindow); !final {
		t.Error("admitted is not final")
	}
	if got := tr.late[phaseWindow][10000]; len(got) != 1 || got[0] < 299 || got[0] > 301 {
		t.Errorf("10 s tier lateness = %v, want [300]", got)
	}
	if got := tr.late[phaseWindow][5000]; len(got) != 1 || got[0] != 0 {
		t.Errorf("5 s tier lateness = %v, want [0]", got)
	}
	if tr.early[phaseWindow] != 1 {
		t.Errorf("early = %d, want 1", tr.early[phaseWindow])
	}
	if a := tr.admit[phaseWindow]; len(a) != 1 || a[0] < 39 || a[0] > 41 {
		t.Errorf("admission = %v, want [40]", a)
	}
	if tr.finals[phaseWindow]["admitted"] != 1 {
		t.Errorf("finals = %v", tr.finals[phaseWindow])
	}
}

func TestObserveIgnoresGapsFromBeforeTheLineMoved(t *testing.T) {
	tr := newTracker()
	t0 := time.Now()
	w := &waiter{}
	tr.observe(w, ticketMsg{State: "waiting", Position: 5, NextUpdateMS: 2000}, t0, phaseRamp)
	tr.setMovingSince(t0.Add(30 * time.Second))
	tr.observe(w, ticketMsg{State: "waiting", Position: 4, NextUpdateMS: 2000}, t0.Add(30*time.Second), phaseWindow)
	if n := len(tr.late[phaseWindow][2000]); n != 0 {
		t.Errorf("counted %d gaps of a paused line", n)
	}
	// Overdue at the end counts from when the line moved, not from the last message.
	w2 := &waiter{}
	tr.observe(w2, ticketMsg{State: "waiting", Position: 9, NextUpdateMS: 2000}, t0, phaseRamp)
	got := overdue([]*waiter{w2}, t0.Add(33*time.Second), t0.Add(30*time.Second))
	if len(got) != 1 || got[0] < 999 || got[0] > 1001 {
		t.Errorf("overdue = %v, want [1000]", got)
	}
}

func TestSummarize(t *testing.T) {
	xs := make([]float64, 0, 100)
	for i := 1; i <= 100; i++ {
		xs = append(xs, float64(i))
	}
	d := summarize(xs, 95)
	if d.N != 100 || d.P50 != 50 || d.P90 != 90 || d.P99 != 99 || d.Max != 100 || d.Over != 5 {
		t.Errorf("summarize = %+v", d)
	}
	if h := histogram([]float64{0, 49, 50, 5000}, 50); h[0] != 2 || h[1] != 1 || h[20] != 1 {
		t.Errorf("histogram = %v", h)
	}
}

func TestParseStatCPU(t *testing.T) {
	line := "1234 (wait room) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 8 0 100 0 0"
	cpu, err := parseStatCPU(line)
	if err != nil || cpu != 3 {
		t.Errorf("parseStatCPU = %v, %v; want 3", cpu, err)
	}
}

func TestRedisInfo(t *testing.T) {
	body := "# Stats\r\ntotal_commands_processed:42\r\n# Commandstats\r\ncmdstat_evalsha:calls=7,usec=10,usec_per_call=1.4\r\n"
	resp := "$" + itoa(len(body)) + "\r\n" + body + "\r\n"
	got, err := readBulk(bufio.NewReader(strings.NewReader(resp)))
	if err != nil {
		t.Fatal(err)
	}
	info := parseRedisInfo(got)
	if info.int("total_commands_processed") != 42 || info.Calls["evalsha"] != 7 {
		t.Errorf("info = %+v", info)
	}
	if _, err := readBulk(bufio.NewReader(strings.NewReader("-ERR nope\r\n"))); err == nil {
		t.Error("an error reply was taken")
	}
}

func itoa(n int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		if n /= 10; n == 0 {
			return string(b)
		}
	}
}

func TestParseGoMem(t *testing.T) {
	body := "# HELP go_goroutines x\n# TYPE go_goroutines gauge\ngo_goroutines 10042\n" +
		"go_memstats_heap_inuse_bytes 1.2345678e+08\ngo_memstats_stack_inuse_bytes 4.194304e+07\ngo_memstats_heap_inuse_bytes_total 1\n"
	m, err := parseGoMem(bufio.NewScanner(strings.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	if m != (goMem{HeapInuse: 123456780, StackInuse: 41943040, Goroutines: 10042}) {
		t.Errorf("got %+v", m)
	}
	if _, err := parseGoMem(bufio.NewScanner(strings.NewReader("go_goroutines 1\n"))); err == nil {
		t.Error("missing gauges: no error")
	}
}

func FuzzParseGoMem(f *testing.F) {
	f.Add("go_goroutines 3\ngo_memstats_heap_inuse_bytes 1e+06\ngo_memstats_stack_inuse_bytes 65536\n")
	f.Add("go_goroutines NaN\n")
	f.Add("go_goroutines\n\n# x\n")
	f.Fuzz(func(t *testing.T, body string) {
		m, err := parseGoMem(bufio.NewScanner(strings.NewReader(body)))
		if err != nil && m != (goMem{}) {
			t.Errorf("error %v with a result %+v", err, m)
		}
	})
}
