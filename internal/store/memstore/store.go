// Package memstore keeps the line in this process's memory: the same ports
// as internal/store/redisstore, in plain Go. It is the executable specification of
// the Lua scripts (internal/store/conformance runs the same behaviour against both)
// and the fast test backend. One mutex guards everything; ended tickets are
// purged by Tick as in Redis, so memory follows the live tickets.
package memstore

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// Store is an in-memory queue.Store.
type Store struct {
	mu        sync.Mutex
	rooms     map[string]*room
	listed    map[string]bool // the rooms set
	epoch     string
	drill     bool
	listeners map[*listener]struct{}
	logID     int64         // the last change log entry's ID, across rooms (changes.go)
	logWake   chan struct{} // closed when an entry is appended; nil while nobody waits
}

var _ queue.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{rooms: map[string]*room{}, listed: map[string]bool{}, epoch: queue.RandomID(),
		listeners: map[*listener]struct{}{}}
}

// room is one room's data: what the Redis adapter keeps under {room}.
type room struct {
	settings []byte // JSON, as Redis keeps it: a Get never shares memory with a Put
	visitors map[string]string
	tickets  map[string]*record
	seq      int64
	q        []waiter // waiting tickets by score
	pre      []waiter // the pre-queue of a scheduled opening, by seq
	draw     *queue.DrawRecord
	seen     map[string]int64    // waiting ticket -> last sign of life (ms)
	present  map[string]snapshot // server -> its open connections (Present)
	sweepAt  int                 // the abandon sweep's cursor: a rank in q (tick.go)
	active   map[string]int64    // admitted ticket -> expiry (ms)
	ended    map[string]int64    // ended ticket -> end time (ms)
	budget   struct{ start, used int64 }
	held     struct{ n, until int64 } // slots held after a data loss, until (ms): restore.lua's budget h, hu
	stats    map[string]int64
	rate     float64
	rated    bool    // rate was written by a tick
	measured float64 // rate without the configured pace's fallback: what was admitted
	admits   []admit
	holders  map[string]holder
	pow      map[string]int64 // spent challenge -> expiry (ms)
	codes    map[string]int64 // redeemed hand-off code (ticket/nonce) -> expiry (ms)
	places   map[string]*bucket
	enters   map[string]float64 // GCRA theoretical arrival time (s) per bucket
	lease    lease              // the admitter lease
	log      []queue.LogEntry   // the change log (changes.go)
	logN     int64              // the last entry's N
	pending  queue.LogEntry     // the running operation's changes to q
}

// waiter is a ticket in a line: its score is its seq, or its drawn place
// ahead of every seq (draw.go), as the Redis ZSETs score them.
type waiter struct {
	score int64
	id    string
}

// snapshot is a server's open connections as of at (ms): Redis keeps it as
// a bitmap of seqs (present.lua).
type snapshot struct {
	at  int64
	ids map[string]struct{}
}

type admit struct {
	at, n int64
	occ   int64 // slots held right after it (tick.lua's o<occ>)
}

type holder struct {
	who   string
	until time.Time
}

// record is a ticket as the store keeps it; times in ms.
type record struct {
	identity                              string
	seq                                   int64
	state                                 queue.State
	reason                                string
	entered, admitted, orderable, expires int64
	entryPos                              int64
	score                                 int64  // the waiter's score in r.q
	arrived                               bool   // an admitted visitor came to checkout (Arrive)
	network                               string // the place's client network (PreQueue, queue.UnarrivedLimit)
}

func newRoom() *room {
	return &room{visitors: map[string]string{}, tickets: map[string]*record{}, seen: map[string]int64{},
		present: map[string]snapshot{}, active: map[string]int64{}, ended: map[string]int64{}, stats: map[string]int64{},
		holders: map[string]holder{}, pow: map[string]int64{}, codes: map[string]int64{}, places: map[string]*bucket{},
		enters: map[string]float64{}, budget: struct{ start, used int64 }{-1, 0}}
}

// room returns room's data, made on first use as Redis keys are; s.mu is held.
func (s *Store) room(id string) *room {
	r, ok := s.rooms[id]
	if !ok {
		r = newRoom()
		s.rooms[id] = r
	}
	return r
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func (s *Store) PutRoom(_ context.Context, room string, st queue.Settings) error {
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("memstore: encode settings: %w", err)
	}
	s.mu.Lock()
	s.room(room).settings = data
	s.listed[room] = true
	s.mu.Unlock()
	s.publish(event{room: room, changed: true})
	return nil
}

func (s *Store) GetRoom(_ context.Context, room string) (queue.Settings, error) {
	s.mu.Lock()
	var data []byte
	if r, ok := s.rooms[room]; ok {
		data = r.settings
	}
	s.mu.Unlock()
	if data == nil {
		return queue.Settings{}, queue.ErrRoomNotFound
	}
	st := queue.DefaultSettings()
	if err := json.Unmarshal(data, &st); err != nil {
		return queue.Settings{}, fmt.Errorf("memstore: decode settings of %s: %w", room, err)
	}
	return st, nil
}

func (s *Store) DeleteRoom(_ context.Context, room string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, had := s.rooms[room]
	listed := s.listed[room]
	if had {
		// As Redis's DeleteRoom: the room's keys go; marks that expire by
		// themselves (holders, places, enters, spent proofs and codes) are kept.
		n := newRoom()
		n.holders, n.places, n.enters, n.pow, n.codes = r.holders, r.places, r.enters, r.pow, r.codes
		s.rooms[room] = n
	}
	delete(s.listed, room)
	if !listed && (!had || r.empty()) {
		return queue.ErrRoomNotFound
	}
	return nil
}

// empty reports whether the room has none of the keys DeleteRoom removes.
func (r *room) empty() bool {
	return r.settings == nil && len(r.visitors) == 0 && len(r.tickets) == 0 && r.seq == 0 && len(r.q) == 0 &&
		len(r.pre) == 0 && r.draw == nil && len(r.active) == 0 && len(r.ended) == 0 && len(r.stats) == 0 && !r.rated && len(r.admits) == 0 &&
		r.budget.start < 0 && r.held.until == 0 && r.lease == lease{}
}

func (s *Store) ListRooms(context.Context) ([]string, error) {
	s.mu.Lock()
	out := make([]string, 0, len(s.listed))
	for id := range s.listed {
		out = append(out, id)
	}
	s.mu.Unlock()
	sort.Strings(out)
	return out, nil
}

func (s *Store) Epoch(context.Context) (queue.Epoch, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return queue.Epoch{ID: s.epoch}, nil
}

// Flush drops every room and starts a new epoch, as a Redis restarted
// without persistence comes back: for tests of the restore path.
func (s *Store) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rooms, s.listed, s.drill, s.epoch = map[string]*room{}, map[string]bool{}, false, queue.RandomID()
}

func (s *Store) RestoreRoom(_ context.Context, room string, st queue.Settings, now time.Time) (bool, error) {
	data, err := json.Marshal(st)
	if err != nil {
		return false, fmt.Errorf("memstore: encode settings: %w", err)
	}
	hold := now.Add(time.Duration(st.JitterMS)*time.Millisecond + time.Duration(st.SessionTTLS)*time.Second)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listed[room] = true
	r := s.room(room)
	if ms(hold) > r.held.until {
		r.held.n, r.held.until = st.Capacity, ms(hold)
	}
	if r.settings != nil {
		return false, nil
	}
	r.settings = data
	return true, nil
}

func (s *Store) Stats(_ context.Context, room string, now time.Time) (queue.Stats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.room(room)
	held := r.heldAt(ms(now))
	return queue.Stats{
		Waiting: int64(len(r.q)), Scheduled: int64(len(r.pre)), Active: r.live(ms(now)) + held, Held: held,
		EnteredTotal: r.stats["entered_total"], AdmittedTotal: r.stats["admitted_total"],
		AbandonedTotal: r.stats["abandoned_total"], ExpiredTotal: r.stats["expired_total"],
		CompletedTotal: r.stats["completed_total"], AdmittedRate: r.measured,
		NoShowTotal: r.stats["no_show_total"], IdleTotal: r.stats["idle_total"],
	}, nil
}

// Probe answers (the store is this process) with the drill.
func (s *Store) Probe(context.Context) (*bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.drill {
		return nil, nil
	}
	on := true
	return &on, nil
}

func (s *Store) SetDrill(_ context.Context, on *bool) error {
	s.mu.Lock()
	s.drill = on != nil && *on
	s.mu.Unlock()
	return nil
}
