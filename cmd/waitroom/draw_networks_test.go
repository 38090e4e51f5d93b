package main

import (
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit"
)

// TestDrawTakesOnePlaceANetworkARound (issue 22, "Owning the draw"):
// through the built binary on a real redis-server, twenty visitors from one
// address (a bot farm on one machine) and five from five others take places
// in a scheduled opening's pre-queue; at the opening the farm has one of the
// first six drawn places, as any one visitor, and the rest of its places
// come after every other network's. The network goes from the request's
// address through the enter to the stored place and the draw.
func TestDrawTakesOnePlaceANetworkARound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel() // its own processes and redis-server; it mostly waits on them
	const token = "5d0c9e8b7a6f45e3a2c1b0d9e8f7a6b5"
	p, _ := startOnRedis(t, buildBinary(t), "--admin-token", token)
	base := "http://" + p.addr
	opens := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if r := call(t, http.DefaultClient, "PUT", base+"/admin/api/rooms/drop", token,
		`{"opens_at": "`+opens+`", "bot_protection": {"proof_of_work": "off"}}`); r.status != 201 {
		t.Fatalf("create room: %d %v", r.status, r.body)
	}
	type visitor struct {
		c      *http.Client
		ticket string
		farm   bool
	}
	enter := func(ip string, farm bool) visitor {
		jar, _ := cookiejar.New(nil)
		c := clientFrom(ip)
		c.Jar = jar
		r := call(t, c, "POST", base+"/api/rooms/drop/enter", "", "")
		if r.status != 200 || r.body["state"] != "scheduled" {
			t.Fatalf("enter from %s before the opening: %d %v", ip, r.status, r.body)
		}
		return visitor{c: c, ticket: r.body["ticket"].(string), farm: farm}
	}
	var all []visitor
	for i := 0; i < 20; i++ {
		all = append(all, enter("127.0.0.2", true))
	}
	for i := 1; i <= 5; i++ {
		all = append(all, enter(fmt.Sprintf("127.0.1.%d", i), false))
	}
	if r := call(t, http.DefaultClient, "POST", base+"/admin/api/rooms/drop/open", token, ""); r.status != 200 {
		t.Fatalf("open now: %d %v", r.status, r.body)
	}

	// Each visitor's drawn place is its entry position once the draw ran.
	place := func(v visitor) (int, string) {
		r := call(t, v.c, "GET", base+"/api/rooms/drop/tickets/"+v.ticket, "", "")
		pos, _ := r.body["entry_position"].(float64)
		state, _ := r.body["state"].(string)
		return int(pos), state
	}
	testkit.Until(t, 15*time.Second, "the draw", func() bool {
		_, state := place(all[0])
		return state != "scheduled"
	})
	firstRound := 0
	for _, v := range all {
		pos, state := place(v)
		if pos < 1 || pos > len(all) {
			t.Fatalf("after the draw: %s at entry position %d", state, pos)
		}
		switch {
		case v.farm && pos <= 6:
			firstRound++
		case !v.farm && pos > 6:
			t.Fatalf("a visitor alone on its address drawn at %d, after the first round", pos)
		}
	}
	if firstRound != 1 {
		t.Fatalf("the farm's address has %d of the first 6 drawn places, want 1", firstRound)
	}
}
