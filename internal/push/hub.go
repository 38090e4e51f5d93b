// Package push keeps waiters' pages current over WebSocket or, as fallback,
// Server-Sent Events. One Hub per process batches ticket reads per room, sends
// each connection its ticket JSON no more often than its tier allows, and
// pushes final states (admitted, expired, ...) at once.
package push

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/jonboulle/clockwork"
	"github.com/waitroom/waitroom/internal/vocab"
)

var (
	// ErrClosed is returned by ServeWS and ServeSSE once Close was called.
	ErrClosed = errors.New("push: hub closed")
	// ErrSlow is why a connection ended when it was dropped because its
	// send queue filled up: reported to the request's Hold, or returned by
	// ServeSSE when it streams through its handler (HTTP/2).
	ErrSlow = errors.New("push: client too slow")
)

// Update is one ticket's current view.
type Update struct {
	Ticket   string
	State    vocab.State
	Interval time.Duration // the tier interval for its position: the least time between two position updates
	Payload  []byte        // the ticket JSON sent to the client; shared by every connection, never modified after
}

// First is a connection's first message, sent at once. When it carries
// the ticket's waiting state and tier interval from a read that started
// after Mark (NoticeMark), the hub takes it as the ticket's current view
// and fetches the ticket first at its tier slot, not at the next tick: the
// read is not repeated. A notice (Notify, NotifyRoom) posted since Mark may
// have overtaken the read, and the ticket is then fetched at the next tick.
type First struct {
	Payload  []byte
	State    vocab.State   // "" or a state other than waiting: schedule as unknown
	Interval time.Duration // the tier interval of the position in Payload
	Mark     uint64        // from NoticeMark, taken before the read; 0: none
}

// Fetcher reads many tickets of one room in ONE round trip (a Redis
// pipeline); it also marks them alive. The hub calls it from one goroutine
// per room at a time, but different rooms may be fetched concurrently.
type Fetcher interface {
	// Fetch returns one Update per ticket, in the same order as tickets.
	Fetch(ctx context.Context, room string, tickets []string) ([]Update, error)
}

// Options tune a Hub; zero values take the defaults noted.
type Options struct {
	Clock        clockwork.Clock          // fake in tests; default real
	Tick         time.Duration            // how often the hub looks for due connections (default 250ms)
	MaxSilence   time.Duration            // fetch a connection at least this often even if its tier is slower, as its sign of life (default 10s)
	SendQueue    int                      // bounded per-connection queue (default 16)
	WriteTimeout time.Duration            // per-write deadline, also bounds pings and fetches (default 5s)
	PingInterval time.Duration            // WebSocket ping / SSE comment keep-alive, sent (from the tick) to a connection sent nothing for this long (default 20s)
	FinalGrace   time.Duration            // how long a connection stays open after a final state, for the client to redirect (default 15s)
	WSAccept     *websocket.AcceptOptions // passed to websocket.Accept, e.g. OriginPatterns
	Logger       *slog.Logger             // default slog.Default()
}

func (o Options) withDefaults() Options {
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.Tick <= 0 {
		o.Tick = 250 * time.Millisecond
	}
	if o.MaxSilence <= 0 {
		o.MaxSilence = 10 * time.Second
	}
	if o.SendQueue <= 0 {
		o.SendQueue = 16
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 5 * time.Second
	}
	if o.PingInterval <= 0 {
		o.PingInterval = 20 * time.Second
	}
	if o.FinalGrace <= 0 {
		o.FinalGrace = 15 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Stats is a snapshot of the hub's counters.
type Stats struct {
	Connections     map[string]int // open connections by transport name: "ws", "sse"
	Tickets         int            // distinct tickets with at least one connection
	Sent            uint64         // messages written, first messages included
	SlowDisconnects uint64         // connections dropped because their queue was full
	Fetches         uint64         // Fetch calls
	FetchErrors     uint64         // failed Fetch calls
}

// Hub tracks every push connection of this process.
type Hub struct {
	f       Fetcher
	o       Options
	clock   clockwork.Clock
	epoch   time.Time // the schedules' origin (mono)
	log     *slog.Logger
	notices chan notice
	running atomic.Bool

	mu     sync.Mutex
	rooms  map[string]*room
	finals map[*client]struct{} // connections that got a final state, until their grace ends
	conns  map[string]int
	closed bool
	wg     sync.WaitGroup // one per registered connection, so Close can wait for them

	sent, slow, fetches, fetchErrors atomic.Uint64
	// noticed counts the notices posted, for NoticeMark.
	noticed atomic.Uint64

	onTick func() // test hook: called after each tick's fetches were applied
}

type room struct {
	tickets map[string]*ticket
	wakes   []wake // one per ticket, in no order (schedule.go)
	force   bool   // NotifyRoom could not queue: push the whole room at the next tick
}

// ticket is what the hub knows of one ticket shared by its connections.
type ticket struct {
	id       string
	idx      int       // its entry in room.wakes
	clients  []*client // nearly always one
	state    vocab.State
	interval time.Duration
	next     time.Time // due for a fetch from then on; zero until the first fetch
	force    bool      // Notify could not queue: fetch and push at the next tick
	// pingAt is the earliest keep-alive due among clients (zero: none yet),
	// so a tick looks at a ticket's connections only when one is due.
	pingAt time.Time
}

// NewHub returns a hub; start its loop with Run.
func NewHub(f Fetcher, o Options) *Hub {
	o = o.withDefaults()
	return &Hub{
		f:       f,
		o:       o,
		clock:   o.Clock,
		epoch:   o.Clock.Now(),
		log:     o.Logger,
		notices: make(chan notice, noticeQueue),
		rooms:   make(map[string]*room),
		finals:  make(map[*client]struct{}),
		conns:   make(map[string]int),
	}
}

// NoticeMark marks this moment for First.Mark: a first message read after
// it is current unless a notice was posted since.
func (h *Hub) NoticeMark() uint64 { return h.noticed.Load() + 1 }

// register adds c and queues first ahead of any update; from then on the
// hub writes to it. It fails once the hub is closed.
func (h *Hub) register(c *client, first First) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	r := h.rooms[c.room]
	if r == nil {
		r = &room{tickets: make(map[string]*ticket)}
		h.rooms[c.room] = r
	}
	now := h.clock.Now()
	t := r.tickets[c.ticket]
	if t == nil {
		t = &ticket{}
		// Read after the last notice: current until its tier slot.
		if first.State == vocab.StateWaiting && first.Mark != 0 && first.Mark == h.NoticeMark() {
			t.state, t.interval = first.State, first.Interval
			t.next = now.Add(h.slot(t))
		}
		r.add(h, c.ticket, t)
	}
	t.clients = append(t.clients, c)
	c.pingAt = now.Add(h.o.PingInterval)
	if t.pingAt.IsZero() || c.pingAt.Before(t.pingAt) {
		t.pingAt = c.pingAt
		r.touch(h, t)
	}
	if len(first.Payload) > 0 {
		c.queue <- first.Payload // fresh queue, capacity >= 1
		c.lastSent = first.Payload
		c.lastSentAt = now
		c.wake(h)
	}
	h.conns[c.tr.Name()]++
	h.wg.Add(1)
	return true
}

func (h *Hub) unregister(c *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.rooms[c.room]; r != nil {
		if t := r.tickets[c.ticket]; t != nil {
			if i := slices.Index(t.clients, c); i >= 0 {
				t.clients = slices.Delete(t.clients, i, i+1)
			}
			if len(t.clients) == 0 {
				r.remove(t)
			}
		}
		if len(r.tickets) == 0 {
			delete(h.rooms, c.room)
		}
	}
	delete(h.finals, c)
	h.conns[c.tr.Name()]--
	h.wg.Done()
}

func (h *Hub) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// Close tells every connection to go away (WebSocket 1001, SSE stream ended)
// so clients reconnect to another instance, and waits for them to finish.
// http.Server.Shutdown does not close hijacked WebSocket connections, so call
// Close before or alongside it. New connections are refused afterwards.
func (h *Hub) Close() {
	h.mu.Lock()
	h.closed = true
	var all []*client
	for _, r := range h.rooms {
		for _, t := range r.tickets {
			all = append(all, t.clients...)
		}
	}
	h.mu.Unlock()
	for _, c := range all {
		c.kick(websocket.StatusGoingAway, reasonShutdown, nil)
	}
	h.wg.Wait()
}

// Stats returns the hub's counters.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	s := Stats{Connections: make(map[string]int, len(h.conns))}
	for name, n := range h.conns {
		if n > 0 {
			s.Connections[name] = n
		}
	}
	for _, r := range h.rooms {
		s.Tickets += len(r.tickets)
	}
	h.mu.Unlock()
	s.Sent = h.sent.Load()
	s.SlowDisconnects = h.slow.Load()
	s.Fetches = h.fetches.Load()
	s.FetchErrors = h.fetchErrors.Load()
	return s
}
