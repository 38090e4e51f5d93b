package dashboard_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/queue"
)

// getJSON reads one of the dashboard's JSON answers into out.
func (b *browser) getJSON(path string, out any) int {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.site.url+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	p := b.do(req)
	if p.status == http.StatusOK {
		if err := json.Unmarshal([]byte(p.body), out); err != nil {
			b.t.Fatalf("%s: %v: %s", path, err, p.body)
		}
	}
	return p.status
}

// TestRoomFiguresWhileRedisIsDown: with Redis gone, the overview and a
// room's figures still show the room's settings as the line last knew them
// (the line holds rooms' settings; the sampler only its samples), and the
// overview says it is stale.
func TestRoomFiguresWhileRedisIsDown(t *testing.T) {
	rs := redistest.Start(t)
	rdb := redis.NewUniversalClient(redisstore.FailFast(&redis.UniversalOptions{Addrs: []string{rs.Addr()}}))
	t.Cleanup(func() { _ = rdb.Close() })
	site := newSite(t, siteOptions{rdb: rdb})
	st := queue.DefaultSettings()
	st.BatchSize, st.Paused = 7, true
	site.putRoom("kept", st)
	b := site.browser()
	b.signIn()

	type overview struct {
		Rooms []struct {
			Room   string `json:"room"`
			Paused bool   `json:"paused"`
		} `json:"rooms"`
		Stale bool `json:"stale"`
	}
	ws, _, err := b.dialWS("/admin/live/ws", site.url)
	if err != nil {
		t.Fatal(err)
	}
	until := func(what string, ok func(overview) bool) {
		t.Helper()
		deadline := time.After(wait)
		for {
			select {
			case m := <-ws.msgs: // a push after every round of the sampler
				var o overview
				if json.Unmarshal([]byte(m), &o) == nil && ok(o) {
					return
				}
			case <-deadline:
				t.Fatalf("the overview never showed %s", what)
			}
		}
	}
	until("the room sampled", func(o overview) bool { return len(o.Rooms) == 1 && o.Rooms[0].Room == "kept" && !o.Stale })

	rs.Kill()
	until("the room, stale, with its settings", func(o overview) bool {
		return o.Stale && len(o.Rooms) == 1 && o.Rooms[0].Room == "kept" && o.Rooms[0].Paused
	})
	var v liveView
	if status := b.getJSON("/admin/rooms/kept/live", &v); status != http.StatusOK || v.Room != "kept" || !v.Paused || v.BatchSize != 7 {
		t.Errorf("room figures with Redis down: %d %+v, want 200 with batch 7 and paused", status, v)
	}
}
