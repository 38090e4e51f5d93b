package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/store/conformance"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/queue"
)

// The line on a real 3-master Redis Cluster: each script's keys must share
// one slot (the room's hash tag), every other key works wherever it lands,
// and pub/sub reaches every server whichever shard publishes.

type clusterRig struct {
	*fixture
	cc    *redis.ClusterClient
	nodes []*redis.Client
	addrs []string
}

func newClusterRig(t *testing.T) *clusterRig {
	t.Helper()
	c := redistest.SharedCluster(t)
	cc := c.Client(t)
	x := conformance.NewFixture(t, func() queue.Store { return redisstore.New(cc, redistest.Prefix(t)) }, nil)
	return &clusterRig{
		fixture: &fixture{Fixture: x, line: x.Line, store: x.Store, clock: x.Clock, keys: x.Keys},
		cc:      cc, nodes: c.NodeClients(t), addrs: c.Addrs(),
	}
}

// master returns the index (in addrs) of the master serving key.
func (r *clusterRig) master(t *testing.T, key string) int {
	t.Helper()
	ctx := context.Background()
	slot, err := r.cc.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	slots, err := r.cc.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range slots {
		if int64(s.Start) <= slot && slot <= int64(s.End) {
			if i := slices.Index(r.addrs, s.Nodes[0].Addr); i >= 0 {
				return i
			}
		}
	}
	t.Fatalf("no master serves slot %d of %s", slot, key)
	return -1
}

// roomPerShard names one room on each master, so a test covers them all.
func (r *clusterRig) roomPerShard(t *testing.T) []string {
	t.Helper()
	rooms := make([]string, len(r.addrs))
	for i := 0; slices.Contains(rooms, ""); i++ {
		if i > 1000 {
			t.Fatalf("1000 rooms and still a master without one: %v", rooms)
		}
		room := fmt.Sprintf("sale-%d", i)
		if m := r.master(t, "{"+room+"}"); rooms[m] == "" {
			rooms[m] = room
		}
	}
	return rooms
}

// psubscribers counts the clients with pattern subscriptions on every master.
func (r *clusterRig) psubscribers(t *testing.T) int {
	t.Helper()
	n := 0
	for _, node := range r.nodes {
		n += psubscribers(t, node)
	}
	return n
}

// TestClusterLine runs a room on every shard through the whole line:
// enter, positions, leave, status of many, an admission heard over
// pub/sub, the token verified, held and completed, stats, limits, the
// proof-of-work spent once, and the room deleted and restored.
func TestClusterLine(t *testing.T) {
	r := newClusterRig(t)
	ctx := context.Background()
	rooms := r.roomPerShard(t)

	admitted := make(chan []string, 100)
	changed := make(chan string, 100)
	listening := r.psubscribers(t)
	lctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	wg.Go(func() {
		_ = r.store.Listen(lctx,
			func(room string, adm []queue.Admitted) { admitted <- append([]string{room}, queue.AdmittedIDs(adm)...) },
			func(room string) { changed <- room })
	})
	deadline := time.Now().Add(30 * time.Second)
	for r.psubscribers(t) <= listening {
		if time.Now().After(deadline) {
			t.Fatal("Listen never subscribed")
		}
		time.Sleep(5 * time.Millisecond) // polling PUBSUB NUMPAT: there is no signal to await
	}

	for _, room := range rooms {
		t.Run(room, func(t *testing.T) {
			r.room(t, room, func(s *queue.Settings) {
				s.BatchSize, s.JitterMS = 2, 0
				s.BotProtection.EntersPerIPPerMinute, s.BotProtection.PlacesPerIP = 2, 2
			})
			if got := waitFor(t, changed); got != room {
				t.Fatalf("settings change heard for %q, want %q", got, room)
			}
			// Two take the fast track, four wait.
			var tk []queue.Ticket
			for i := range 6 {
				tk = append(tk, r.enter(t, room, fmt.Sprintf("v:%d", i)))
			}
			for i, want := range []int64{0, 0, 1, 2, 3, 4} {
				if tk[i].Position != want {
					t.Fatalf("v:%d at %d (%s), want %d", i, tk[i].Position, tk[i].State, want)
				}
			}
			if err := r.line.Leave(ctx, room, tk[3].ID, tk[3].Identity); err != nil {
				t.Fatal(err)
			}
			if got := r.status(t, room, tk[4]); got.Position != 2 {
				t.Fatalf("after one ahead left: position %d, want 2", got.Position)
			}
			many, _, err := r.line.StatusMany(ctx, room, []string{tk[2].ID, tk[4].ID, tk[5].ID})
			if err != nil {
				t.Fatal(err)
			}
			for i, m := range many {
				if m.Position != int64(i+1) {
					t.Fatalf("status of many: %d at %d, want %d", i, m.Position, i+1)
				}
			}

			r.clock.Advance(200 * time.Millisecond)
			res := r.tick(t, room)
			if want := []string{tk[2].ID, tk[4].ID}; !slices.Equal(res.Admitted, want) {
				t.Fatalf("tick admitted %v, want %v", res.Admitted, want)
			}
			heard := waitFor(t, admitted)
			if !slices.Equal(heard, []string{room, tk[2].ID, tk[4].ID}) {
				t.Fatalf("heard admission %v, want %s %v", heard, room, res.Admitted)
			}

			in := r.status(t, room, tk[2])
			tok, err := r.line.Token(in)
			if err != nil || tok == "" {
				t.Fatalf("token of %+v: %q %v", in, tok, err)
			}
			if v, err := r.line.Hold(ctx, tok, room, "u:first", queue.HoldFirst); err != nil || !v.Valid {
				t.Fatalf("first holder: %+v %v", v, err)
			}
			if v, err := r.line.Hold(ctx, tok, room, "u:second", queue.HoldFirst); err != nil || v.Reason != queue.ReasonOtherHolder {
				t.Fatalf("second holder: %+v %v", v, err)
			}
			if v, err := r.line.Complete(ctx, tok, room); err != nil || !v.Valid {
				t.Fatalf("complete: %+v %v", v, err)
			}
			if v, err := r.line.Verify(ctx, tok, room); err != nil || v.Valid || v.Reason != "completed" {
				t.Fatalf("verify after complete: %+v %v", v, err)
			}

			st, err := r.store.Stats(ctx, room, r.clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			if st.Waiting != 1 || st.EnteredTotal != 6 || st.CompletedTotal != 1 {
				t.Fatalf("stats %+v, want 1 waiting, 6 entered, 1 completed", st)
			}

			s, err := r.line.Settings(ctx, room)
			if err != nil {
				t.Fatal(err)
			}
			var limited *queue.LimitError
			for i := range 3 {
				err = r.line.LimitClient(ctx, room, &s, "198.51.100.7", fmt.Sprintf("v:new-%d", i))
			}
			if !errors.As(err, &limited) {
				t.Fatalf("third new place of one client: %v, want a limit", err)
			}

			proof := queue.EntryProof{Required: true, ID: "challenge-" + room, Expires: r.clock.Now().Add(time.Minute)}
			if _, _, err := r.line.EnterWith(ctx, room, "v:worker", proof); err != nil {
				t.Fatalf("enter with proof: %v", err)
			}
			if _, _, err := r.line.EnterWith(ctx, room, "v:copycat", proof); !errors.Is(err, queue.ErrProofSpent) {
				t.Fatalf("the same proof again: %v, want %v", err, queue.ErrProofSpent)
			}
		})
	}

	listed, err := r.line.ListRooms(ctx)
	if err != nil || !slices.Equal(listed, slices.Sorted(slices.Values(rooms))) {
		t.Fatalf("rooms %v %v, want %v", listed, err, rooms)
	}
	gone := rooms[0]
	s, err := r.line.Settings(ctx, gone)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.line.DeleteRoom(ctx, gone); err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.GetRoom(ctx, gone); !errors.Is(err, queue.ErrRoomNotFound) {
		t.Fatalf("deleted room: %v", err)
	}
	for _, room := range rooms {
		want := room == gone
		if got, err := r.store.RestoreRoom(ctx, room, s, r.clock.Now()); err != nil || got != want {
			t.Fatalf("restore %s: %v %v, want %v", room, got, err, want)
		}
	}
	if listed, _ := r.line.ListRooms(ctx); len(listed) != len(rooms) {
		t.Fatalf("after restore: rooms %v", listed)
	}
	st, err := r.store.Stats(ctx, gone, r.clock.Now())
	if err != nil || st.Active != s.Capacity {
		t.Fatalf("restored room: %+v %v, want its whole capacity held", st, err)
	}
}

// TestClusterDeploymentKeys: the keys outside any room (epoch, drill, the
// liveness probe) work on the cluster.
func TestClusterDeploymentKeys(t *testing.T) {
	r := newClusterRig(t)
	ctx := context.Background()
	a, err := r.store.Epoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := r.store.Epoch(ctx); err != nil || b.ID != a.ID || b.Rewound {
		t.Fatalf("epoch %+v then %+v %v", a, b, err)
	}
	on := true
	if err := r.store.SetDrill(ctx, &on); err != nil {
		t.Fatal(err)
	}
	if got, err := r.store.Probe(ctx); err != nil || got == nil || !*got {
		t.Fatalf("probe with the drill on: %v %v", got, err)
	}
	if err := r.store.SetDrill(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := r.store.Probe(ctx); err != nil || got != nil {
		t.Fatalf("probe with the drill off: %v %v", got, err)
	}
}

// TestClusterRoomsSpreadOverShards: 30 rooms' keys land on all 3 masters,
// and each room's keys in one slot of one master.
func TestClusterRoomsSpreadOverShards(t *testing.T) {
	r := newClusterRig(t)
	ctx := context.Background()
	perMaster := make([]int, len(r.addrs))
	for i := range 30 {
		room := fmt.Sprintf("drop-%02d", i)
		r.room(t, room, func(s *queue.Settings) { s.BatchSize = 1 })
		r.enter(t, room, "v:first")
		r.enter(t, room, "v:second") // waits: q, seen, seq and the rest now exist
		slot, err := r.cc.ClusterKeySlot(ctx, "{"+room+"}").Result()
		if err != nil {
			t.Fatal(err)
		}
		holders := 0
		for m, node := range r.nodes {
			n, err := node.ClusterCountKeysInSlot(ctx, int(slot)).Result()
			if err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				holders++
				perMaster[m]++
				if m != r.master(t, "{"+room+"}") {
					t.Fatalf("room %s's slot %d has keys on %s, which does not serve it", room, slot, r.addrs[m])
				}
			}
		}
		if holders != 1 {
			t.Fatalf("room %s's slot %d is on %d masters", room, slot, holders)
		}
	}
	t.Logf("30 rooms per master: %v", perMaster)
	for m, n := range perMaster {
		if n == 0 {
			t.Errorf("master %s holds none of 30 rooms: %v", r.addrs[m], perMaster)
		}
	}
}

func waitFor[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("nothing heard in 10s")
		var zero T
		return zero
	}
}
