package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func fakeLookup(addrs map[string][]string) func(context.Context, string) ([]net.IPAddr, error) {
	return func(_ context.Context, host string) ([]net.IPAddr, error) {
		ips, ok := addrs[host]
		if !ok {
			return nil, errors.New("no such host")
		}
		var out []net.IPAddr
		for _, s := range ips {
			out = append(out, net.IPAddr{IP: net.ParseIP(s)})
		}
		return out, nil
	}
}

func TestCheckLoopback(t *testing.T) {
	lookup := fakeLookup(map[string][]string{
		"localhost": {"127.0.0.1", "::1"},
		"sneaky":    {"127.0.0.1", "192.0.2.7"},
		"remote":    {"192.0.2.7"},
		"empty":     {},
	})
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"http://127.0.0.1:8080", true},
		{"http://127.9.9.9:1/base", true},
		{"http://[::1]:8080", true},
		{"https://localhost:8443", true},
		{"http://localhost", true},
		{"http://192.0.2.7:8080", false},
		{"http://0.0.0.0:8080", false}, // binds everywhere, but dialing it is not a loopback promise
		{"http://[::]:8080", false},
		{"http://sneaky:8080", false}, // one non-loopback address is enough to refuse
		{"http://remote", false},
		{"http://empty", false},
		{"http://unknown", false},
		{"ftp://127.0.0.1", false},
		{"127.0.0.1:8080", false},
		{"http://user:pw@127.0.0.1", false},
		{"http://", false},
	} {
		_, err := checkLoopback(tc.url, lookup)
		if (err == nil) != tc.ok {
			t.Errorf("checkLoopback(%q) = %v, want ok=%v", tc.url, err, tc.ok)
		}
	}
}

func TestLoopbackOnly(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:80": true, "[::1]:80": true, "10.1.2.3:80": false, "[2001:db8::1]:80": false, "nonsense": false,
	} {
		if err := loopbackOnly("tcp", addr, nil); (err == nil) != ok {
			t.Errorf("loopbackOnly(%q) = %v, want ok=%v", addr, err, ok)
		}
	}
}

func durations(ms ...int) []time.Duration {
	out := make([]time.Duration, len(ms))
	for i, m := range ms {
		out[i] = time.Duration(m) * time.Millisecond
	}
	return out
}

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond // 1..100 ms
	}
	for _, tc := range []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 99, 0},
		{"one", durations(7), 50, 7 * time.Millisecond},
		{"one p100", durations(7), 100, 7 * time.Millisecond},
		{"p50 of 100", hundred, 50, 50 * time.Millisecond},
		{"p90 of 100", hundred, 90, 90 * time.Millisecond},
		{"p99 of 100", hundred, 99, 99 * time.Millisecond},
		{"p99.9 of 100 rounds up", hundred, 99.9, 100 * time.Millisecond},
		{"max", hundred, 100, 100 * time.Millisecond},
		{"p0 is min", hundred, 0, time.Millisecond},
		{"p50 of 4", durations(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p51 of 4", durations(1, 2, 3, 4), 51, 3 * time.Millisecond},
		{"p99 of 3 is the max", durations(1, 2, 3), 99, 3 * time.Millisecond},
	} {
		if got := percentile(tc.sorted, tc.p); got != tc.want {
			t.Errorf("%s: percentile(p%v) = %v, want %v", tc.name, tc.p, got, tc.want)
		}
	}
}

func TestRecorderReport(t *testing.T) {
	a, b := newRecorder(), newRecorder()
	for _, ms := range []int{5, 1, 3} {
		a.add("enter", time.Duration(ms)*time.Millisecond, 200)
	}
	b.add("enter", 2*time.Millisecond, 200)
	b.add("enter", 4*time.Millisecond, 503)
	b.add("enter", time.Second, 0) // no response: counted, not timed
	a.merge(b)
	r := a.ops["enter"].report(2 * time.Second)
	if r.Requests != 6 || r.OK != 4 || r.Errors["503"] != 1 || r.Errors["transport"] != 1 {
		t.Fatalf("counts: %+v", r)
	}
	if r.RPS != 3 || r.OKRPS != 2 {
		t.Errorf("rates: %v %v, want 3 and 2", r.RPS, r.OKRPS)
	}
	if r.P50MS != 3 || r.MaxMS != 5 {
		t.Errorf("p50 %v max %v, want 3 and 5 (the transport error is not a latency)", r.P50MS, r.MaxMS)
	}
}

func TestConfigBounds(t *testing.T) {
	for _, args := range [][]string{
		{"--requests", "0"},
		{"--requests", "100000000"},
		{"--duration", "0s"},
		{"--duration", "1h"},
		{"--concurrency", "0"},
		{"--mode", "flood"},
		{"--warmup", "20s", "--duration", "10s"},
		{"--reset"},
		{"--room", "a/b"},
	} {
		if _, err := parseConfig(args, &bytes.Buffer{}); err == nil {
			t.Errorf("parseConfig(%q) accepted", args)
		}
	}
	if _, err := parseConfig(nil, &bytes.Buffer{}); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

// fakeWaitroom answers like waitroom's API, enough to drive every mode.
func fakeWaitroom(t *testing.T, requests *atomic.Int64) *httptest.Server {
	var n atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /admin/api/rooms/{room}", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer admin-token-0123456789" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusCreated)
	})
	mux.HandleFunc("GET /admin/api/rooms/{room}/stats", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"waiting":%d}`, n.Load())
	})
	mux.HandleFunc("POST /api/rooms/{room}/enter", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		id := n.Add(1)
		vid := fmt.Sprintf("%032x", id)
		if c, err := r.Cookie("wr_vid"); err == nil {
			vid = c.Value
		} else {
			http.SetCookie(w, &http.Cookie{Name: "wr_vid", Value: vid, HttpOnly: true})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"ticket": fmt.Sprintf("%032x", id), "state": "waiting"})
	})
	mux.HandleFunc("GET /api/rooms/{room}/tickets/{ticket}", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if c, err := r.Cookie("wr_vid"); err != nil || len(c.Value) != 32 {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		_, _ = w.Write([]byte(`{"state":"waiting"}`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestRunModes(t *testing.T) {
	for _, tc := range [][2]string{
		{"enter", "raw"}, {"status", "raw"}, {"mixed", "raw"}, {"enter", "std"}, {"status", "std"}, {"mixed", "std"},
	} {
		mode, client := tc[0], tc[1]
		t.Run(mode+"/"+client, func(t *testing.T) {
			var requests atomic.Int64
			srv := fakeWaitroom(t, &requests)
			var out, errOut bytes.Buffer
			args := []string{"--url", srv.URL, "--mode", mode, "--client", client, "--concurrency", "4", "--requests", "50",
				"--duration", "5s", "--warmup", "0s", "--visitors", "10", "--admin-token", "admin-token-0123456789", "--json"}
			if err := run(context.Background(), args, &out, &errOut); err != nil {
				t.Fatalf("run: %v\n%s", err, errOut.String())
			}
			var res result
			if err := json.Unmarshal(out.Bytes(), &res); err != nil {
				t.Fatalf("json line %q: %v", out.String(), err)
			}
			if res.Total != 50 {
				t.Errorf("total %d, want the cap of 50", res.Total)
			}
			for name, op := range res.Ops {
				if op.OK != op.Requests {
					t.Errorf("%s: %d of %d ok: %v", name, op.OK, op.Requests, op.Errors)
				}
			}
			if mode == "mixed" && (res.Ops["enter"].Requests == 0 || res.Ops["status"].Requests == 0) {
				t.Errorf("mixed ran %v", res.Ops)
			}
			if !strings.Contains(errOut.String(), "req/s") {
				t.Errorf("no human report on stderr: %q", errOut.String())
			}
		})
	}
}

func TestRunStopsOnTime(t *testing.T) {
	var requests atomic.Int64
	srv := fakeWaitroom(t, &requests)
	start := time.Now()
	err := run(context.Background(), []string{"--url", srv.URL, "--concurrency", "2", "--requests", "10000000",
		"--duration", "200ms", "--warmup", "0s"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("ran %v for a 200ms duration", d)
	}
}

func TestRunOpenLoop(t *testing.T) {
	var requests atomic.Int64
	srv := fakeWaitroom(t, &requests)
	var out bytes.Buffer
	err := run(context.Background(), []string{"--url", srv.URL, "--concurrency", "4", "--rate", "200",
		"--duration", "500ms", "--warmup", "0s", "--json"}, &out, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var res result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	// 200/s for half a second is 100 requests due; none due at or after the deadline.
	if res.Total != 100 {
		t.Errorf("open loop sent %d, want the 100 due", res.Total)
	}
}

func TestReadReply(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       string
		status   int
		body     string
		vid      string
		keep, ok bool
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 200, "hello", "", true, true},
		{"cookie", "HTTP/1.1 200 OK\r\nSet-Cookie: wr_vid=abc; Path=/; HttpOnly\r\nContent-Length: 2\r\n\r\n{}", 200, "{}", "abc", true, true},
		{"chunked", "HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n", 503, "abcde", "", true, true},
		{"close", "HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", 404, "", "", false, true},
		{"to eof", "HTTP/1.1 200 OK\r\n\r\nrest", 200, "rest", "", false, true},
		{"http/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", 200, "", "", false, true},
		{"no content", "HTTP/1.1 204 No Content\r\n\r\n", 204, "", "", true, true},
		{"garbage", "SSH-2.0-OpenSSH\r\n", 0, "", "", false, false},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhi", 200, "", "", false, false},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", 200, "", "", false, false},
	} {
		rep, keep, err := readReply(bufio.NewReader(strings.NewReader(tc.in)), true)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok=%v", tc.name, err, tc.ok)
			continue
		}
		if !tc.ok {
			continue
		}
		if rep.status != tc.status || string(rep.body) != tc.body || rep.vid != tc.vid || keep != tc.keep {
			t.Errorf("%s: got %d %q vid=%q keep=%v", tc.name, rep.status, rep.body, rep.vid, keep)
		}
	}
	// Discarding the body leaves the reader at the next reply.
	br := bufio.NewReader(strings.NewReader("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"))
	if rep, _, err := readReply(br, false); err != nil || rep.status != 200 || rep.body != nil {
		t.Fatalf("first: %v %+v", err, rep)
	}
	if rep, _, err := readReply(br, false); err != nil || rep.status != 201 {
		t.Fatalf("second: %v %+v", err, rep)
	}
}

func TestRawRequest(t *testing.T) {
	got := string(rawRequest("POST", "127.0.0.1:8080", "/api/rooms/r/enter", ""))
	want := "POST /api/rooms/r/enter HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: 0\r\n\r\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	got = string(rawRequest("GET", "localhost", "/x", "abc"))
	if want := "GET /x HTTP/1.1\r\nHost: localhost\r\nCookie: wr_vid=abc\r\n\r\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestOpenLoopOverloadEnds(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(50 * time.Millisecond)
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(slow.Close)
	var out bytes.Buffer
	start := time.Now()
	err := run(context.Background(), []string{"--url", slow.URL, "--concurrency", "1", "--rate", "1000",
		"--duration", "200ms", "--warmup", "0s", "--json"}, &out, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("an overloaded 200ms run took %v", d)
	}
	var res result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Total+res.Unsent != 200 || res.Unsent == 0 {
		t.Errorf("sent %d and dropped %d of the 200 due", res.Total, res.Unsent)
	}
	if p99 := res.Ops["enter"].P99MS; p99 < 100 {
		t.Errorf("p99 %vms: the wait behind a slow server must count from when each request was due", p99)
	}
}
