package main

import (
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit"
)

// TestSquattersHoldFiveSlotsANetwork (issue 22, "Squatting checkout"):
// through the built binary on a real redis-server with a room's default
// settings, a farm on one address takes eight places and never comes to
// checkout. Its first five are admitted at once (unarrived_per_network);
// its sixth waits at the head of the line while a visitor from another
// address, behind it, is admitted; when one of the farm's slots is used
// (the shop's verify of its token), the sixth goes in and the seventh
// waits. The network goes from the request's address through the enter to
// the stored place, the admission and the arrival.
func TestSquattersHoldFiveSlotsANetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel() // its own processes and redis-server; it mostly waits on them
	const token = "c4a1f0e9d8b7a6953e2d1c0b9a8f7e6d"
	p, _ := startOnRedis(t, buildBinary(t), "--admin-token", token)
	base := "http://" + p.addr
	if r := call(t, http.DefaultClient, "PUT", base+"/admin/api/rooms/sale", token,
		`{"jitter_ms": 0, "abandon_after_s": 120, "bot_protection": {"proof_of_work": "off"}}`); r.status != 201 {
		t.Fatalf("create room: %d %v", r.status, r.body)
	}
	type visitor struct {
		c      *http.Client
		ticket string
		token  string
	}
	enter := func(ip string) (visitor, string) {
		t.Helper()
		jar, _ := cookiejar.New(nil)
		c := clientFrom(ip)
		c.Jar = jar
		r := call(t, c, "POST", base+"/api/rooms/sale/enter", "", "")
		if r.status != 200 {
			t.Fatalf("enter from %s: %d %v", ip, r.status, r.body)
		}
		tok, _ := r.body["token"].(string)
		state, _ := r.body["state"].(string)
		return visitor{c: c, ticket: r.body["ticket"].(string), token: tok}, state
	}
	status := func(v visitor) (string, int) {
		t.Helper()
		r := call(t, v.c, "GET", base+"/api/rooms/sale/tickets/"+v.ticket, "", "")
		state, _ := r.body["state"].(string)
		pos, _ := r.body["position"].(float64)
		return state, int(pos)
	}

	var farm []visitor
	for i := range 8 {
		v, state := enter("127.0.0.2")
		if want := map[bool]string{true: "admitted", false: "waiting"}[i < 5]; state != want {
			t.Fatalf("the farm's place %d: %s, want %s", i+1, state, want)
		}
		farm = append(farm, v)
	}
	person, _ := enter("127.0.1.7")
	testkit.Until(t, 10*time.Second, "the visitor behind the farm admitted", func() bool {
		state, _ := status(person)
		return state == "admitted"
	})
	if state, pos := status(farm[5]); state != "waiting" || pos != 1 {
		t.Fatalf("the farm's sixth place: %s at %d, want waiting at the head", state, pos)
	}

	// The shop sees the farm's first visitor at checkout: one slot is used.
	r := call(t, http.DefaultClient, "POST", base+"/api/tokens/verify", token,
		fmt.Sprintf(`{"token": %q, "room": "sale"}`, farm[0].token))
	if r.status != 200 || r.body["valid"] != true {
		t.Fatalf("the shop's verify of the farm's first token: %d %v", r.status, r.body)
	}
	testkit.Until(t, 10*time.Second, "the farm's sixth place admitted after an arrival", func() bool {
		state, _ := status(farm[5])
		return state == "admitted"
	})
	// Positions come from the server's view of the line, a moment behind.
	testkit.Until(t, 10*time.Second, "the farm's seventh place at the head", func() bool {
		_, pos := status(farm[6])
		return pos == 1
	})
	if state, _ := status(farm[6]); state != "waiting" {
		t.Fatalf("the farm's seventh place: %s, want waiting: the farm holds five unarrived slots", state)
	}
}
