package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

// The tool refuses anything but loopback, unbounded runs and a role it
// does not know: a typo must not turn it on someone else's server.
func TestParseConfigRefusesWhatItMustNotDo(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--role", "attacker", "--url", "http://192.0.2.1:8080"}, "--url"},
		{[]string{"--role", "attacker", "--url", "http://localhost:8080"}, "--url"},
		{[]string{"--role", "attacker", "--addr", "10.0.0.2"}, "--addr"},
		{[]string{"--role", "honest"}, "--admin-token"},
		{[]string{"--role", "honest", "--admin-token", "x", "--addr", "127.0.0.200", "--addrs", "100"}, "past 127.0.0.254"},
		{[]string{"--role", "attacker", "--duration", "1h"}, "--duration"},
		{[]string{"--role", "attacker", "--cores", "0"}, "--cores"},
		{[]string{"--role", "spy"}, "--role"},
	} {
		if _, err := parseConfig(c.args, io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %s", c.args, err, c.want)
		}
	}
	c, err := parseConfig([]string{"--role", "honest", "--admin-token", "x", "--duration", "90s"}, io.Discard)
	if err != nil || c.Addr != "127.0.0.3" || c.Duration != 90*time.Second {
		t.Fatalf("defaults: %+v %v", c, err)
	}
}

func TestPct(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	if pct(xs, 50) != 3 || pct(xs, 100) != 5 || pct(nil, 95) != 0 || pct(xs, 0) != 1 {
		t.Fatalf("pct: %v %v %v", pct(xs, 50), pct(xs, 100), pct(xs, 0))
	}
}
