package main

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseRefusesOutsideLoopbackAndBounds(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--url", "http://192.0.2.7:80"}, "--url"},
		{[]string{"--attacker", "10.0.0.5"}, "--attacker"},
		{[]string{"--honest", "example.com"}, "--honest"},
		{[]string{"--hold", "30001"}, "--hold"},
		{[]string{"--rate", "0"}, "--rate"},
		{[]string{"--honest-rate", "5000"}, "--honest-rate"},
		{[]string{"--duration", "5m", "--settle", "1s"}, "at most"},
		{[]string{"--mode", "loud"}, "--mode"},
	} {
		if _, err := parse(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one naming %s", tc.args, err, tc.want)
		}
	}
	if _, err := parse(nil); err != nil {
		t.Fatalf("defaults: %v", err)
	}
}

// TestRunHoldsAndMeasures drives a plain HTTP server: the attacker holds
// its connections and the honest client's requests are counted.
func TestRunHoldsAndMeasures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}), ReadHeaderTimeout: time.Minute}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	cfg, err := parse([]string{"--url", "http://" + ln.Addr().String(), "--hold", "20", "--rate", "1000",
		"--settle", "300ms", "--duration", "500ms", "--honest-rate", "20"})
	if err != nil {
		t.Fatal(err)
	}
	rep := run(context.Background(), cfg)
	if rep.Attacker.HeldMax != 20 || rep.Attacker.Refused != 0 {
		t.Fatalf("attacker: %+v, want 20 held", rep.Attacker)
	}
	if rep.Honest.Requests == 0 || rep.Honest.OK != rep.Honest.Requests {
		t.Fatalf("honest: %+v", rep.Honest)
	}
}
