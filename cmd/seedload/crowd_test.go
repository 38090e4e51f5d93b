package main

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

func TestParseCrowdDefaultsAndRefusals(t *testing.T) {
	c, err := parseCrowd([]string{"--admin-token", "x", "--url", "http://127.0.5.1:25002/"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.URL != "http://127.0.5.1:25002" || c.Visitors != 2000 || c.Arrive != 50 || c.ArriveEvery != 2*time.Second ||
		c.PollEvery != time.Second || len(c.Modes) != 2 || c.Modes[0] != crowdPoll || c.Modes[1] != crowdWS {
		t.Errorf("defaults = %+v", c)
	}
	c, err = parseCrowd([]string{"--admin-token", "x", "-visitors", "500", "--modes", "ws", "--sources", "40", "--source-first", "127.0.5.11"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Visitors != 500 || len(c.Modes) != 1 || c.Modes[0] != crowdWS || c.Sources != 40 || !c.SourceFirst.Equal(net.IPv4(127, 0, 5, 11)) {
		t.Errorf("config = %+v", c)
	}
	for _, args := range [][]string{
		{"crowd", "--url", "http://127.0.0.1:8080"}, // no admin token
		{"crowd", "--admin-token", "x", "--url", "http://192.168.1.2:8080"},
		{"crowd", "--admin-token", "x", "--redis-addr", "10.0.0.1:6379"},
		{"crowd", "--admin-token", "x", "--visitors", "1000000"},
		{"crowd", "--admin-token", "x", "--modes", "poll,sse"},
		{"crowd", "--admin-token", "x", "--arrive", "0"},
		{"crowd", "--admin-token", "x", "--arrive-every", "1ms"},
		{"crowd", "--admin-token", "x", "--poll-every", "1ms"},
		{"crowd", "--admin-token", "x", "--batch-size", "0"},
		{"crowd", "--admin-token", "x", "--run-timeout", "1h"},
		{"crowd", "--admin-token", "x", "--source-first", "10.0.0.1"},
		{"crowd", "--admin-token", "x", "--source-first", "127.0.0.250", "--sources", "10"}, // past .254
		{"crowd", "--admin-token", "x", "extra"},
	} {
		if err := runMain(context.Background(), args, io.Discard, io.Discard); err == nil {
			t.Errorf("runMain(%q) = nil error", args)
		}
	}
}

func TestFIFOInversionsCountOnlyCertainOnes(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// v enters over [in, in+0.1], was last seen waiting at seen (asked) and
	// heard admitted at adm (0: never seen waiting, or never admitted).
	v := func(in, seen, adm float64) crowdVisitor {
		cv := crowdVisitor{EnterStart: at(in), EnterDone: at(in + 0.1)}
		if seen > 0 {
			cv.LastWaiting = at(seen)
		}
		if adm > 0 {
			cv.Admitted = at(adm)
		}
		return cv
	}
	for _, tc := range []struct {
		name string
		vs   []crowdVisitor
		want int
	}{
		{"in order", []crowdVisitor{v(1, 5, 6), v(2, 6, 7), v(3, 7, 8)}, 0},
		// b heard admitted at 5.5, a still waiting when asked at 6: certain.
		{"one overtaken", []crowdVisitor{v(1, 6, 7), v(2, 5, 5.5)}, 1},
		// Admitted in the same window as a's last poll: the polls' phase, not an inversion.
		{"within a poll", []crowdVisitor{v(1, 5, 7), v(2, 4, 6)}, 0},
		// Enters that overlap have no order.
		{"overlapping enters", []crowdVisitor{v(1, 6, 7), v(1.05, 5, 5.5)}, 0},
		// Never admitted, still waiting at the end: everyone after it admitted before counts.
		{"left behind", []crowdVisitor{v(1, 20, 0), v(2, 3, 4), v(3, 4, 5)}, 2},
		// Admitted at enter, never seen waiting: nobody overtook it.
		{"admitted at once", []crowdVisitor{v(1, 0, 1.1), v(2, 0, 2.1)}, 0},
		// The last of three overtakes both.
		{"last first", []crowdVisitor{v(1, 9, 10), v(2, 9, 10), v(3, 4, 5)}, 2},
	} {
		if got := fifoInversions(tc.vs); got != tc.want {
			t.Errorf("%s: fifoInversions = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestWaiterSecondsEndAtAdmissionOrTheLastWait(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	vs := []crowdVisitor{
		{EnterDone: t0, LastWaiting: t0.Add(2 * time.Second), Admitted: t0.Add(3 * time.Second)}, // 3 s
		{EnterDone: t0, LastWaiting: t0.Add(4 * time.Second)},                                    // never admitted: 4 s
		{EnterDone: t0, Admitted: t0},                                                            // admitted at enter: 0
		{},                                                                                       // never entered
	}
	if got := waiterSeconds(vs); got != 7 {
		t.Errorf("waiterSeconds = %v, want 7", got)
	}
	r := crowdRun{Requests: 10, WaiterSeconds: 7}
	r.setPerRequest(resources{}, resources{redisCommands: 14})
	if r.RedisPerWaiterS != 2 {
		t.Errorf("per waiter-second = %v, want 2", r.RedisPerWaiterS)
	}
}

func TestParseRedisInfoSumsCallsAndCPU(t *testing.T) {
	info := "# CPU\r\nused_cpu_sys:1.500000\r\nused_cpu_user:2.250000\r\nused_cpu_sys_children:9.000000\r\n" +
		"used_cpu_user_children:9.000000\r\n\r\n# Commandstats\r\n" +
		"cmdstat_evalsha:calls=10,usec=500,usec_per_call=50.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_zadd:calls=70,usec=70,usec_per_call=1.00,rejected_calls=2,failed_calls=0\r\n" +
		"cmdstat_info:calls=3,usec=90,usec_per_call=30.00,rejected_calls=0,failed_calls=0\r\n"
	calls, cpu := parseRedisInfo(info)
	if calls != 83 || cpu != 3.75 {
		t.Errorf("parseRedisInfo = %d calls, %.2f s; want 83, 3.75 (the children's CPU is not Redis's)", calls, cpu)
	}
}

func TestPerRequestDividesTheDifference(t *testing.T) {
	r := crowdRun{Requests: 1000}
	r.setPerRequest(resources{redisCommands: 500, redisCPU: 1, serverCPU: 10},
		resources{redisCommands: 7500, redisCPU: 1.04, serverCPU: 10.3})
	if r.RedisCommands != 7000 || r.RedisPerRequest != 7 || int(r.RedisCPUUS+0.5) != 40 || int(r.ServerCPUUS+0.5) != 300 {
		t.Errorf("per request = %+v", r)
	}
	none := crowdRun{}
	none.setPerRequest(resources{}, resources{redisCommands: 5})
	if none.RedisPerRequest != 0 || none.RedisCommands != 5 {
		t.Errorf("no requests = %+v", none)
	}
}
