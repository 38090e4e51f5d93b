package queue

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/internal/vocab"
)

// settingsFresh is how long a cached room's settings are trusted when this
// server's admission loop has not refreshed them (the loop does every tick).
const settingsFresh = time.Second

// Line is the waiting room's domain service: rooms, tickets, admission and
// entry tokens. Handlers talk to it, never to the store.
type Line struct {
	store  Store
	keys   *token.Keyset
	clock  clockwork.Clock
	log    *slog.Logger
	jitter func(max time.Duration) time.Duration
	newID  func() string
	draw   func() uint64
	open   func(room string) bool
	snap   RoomSnapshot
	// snapEpoch is Redis's data epoch as the snapshot last saw it.
	snapEpoch string
	eta       *Estimator
	// positions follows the change logs of the rooms this server has waiters
	// in; NewWaiters runs it.
	positions *Positions
	intents   intentsBox // intents.go

	// server names this server in draw records.
	server string
	// tokenInURL puts the entry token itself in redirect_url (LineOptions).
	tokenInURL bool

	// places keeps positions from going up on this server (places.go).
	places places

	mu    sync.Mutex
	cache map[string]cachedRoom
	drawn map[string]drawSeen // the opening last seen drawn, per room
	// puts counts this server's PutRoom calls: a store read that began
	// before one may bring back the settings it replaced, and is not
	// cached over them (remember).
	puts uint64
}

type cachedRoom struct {
	settings Settings
	at       time.Time
}

// LineOptions are Line's optional parts; zero values pick real ones.
type LineOptions struct {
	Clock  clockwork.Clock
	Logger *slog.Logger
	// Jitter returns a uniform random delay in [0, max); tests pin it.
	Jitter func(max time.Duration) time.Duration
	// NewID returns an unguessable id; tests may make it predictable.
	NewID func() string
	// LineOpen reports whether an adaptive room's line is open now; nil
	// keeps adaptive rooms' lines always open.
	LineOpen func(room string) bool
	// Draw returns a uniform random number in [0, DrawRange) for a random
	// line's admissions; nil is crypto/rand. Tests seed it.
	Draw func() uint64
	// Snapshot, when set, keeps the rooms this server knows on local disk;
	// NewLine loads it, so degraded mode serves them even when the server
	// starts while Redis is down.
	Snapshot RoomSnapshot
	// Server names this server in draw records; empty is host/pid.
	Server string
	// TokenInURL makes redirect_url carry the entry token (?wr_token=), as
	// a checkout that verifies offline and cannot redeem a hand-off code
	// needs; by default it carries a hand-off code (?wr_code=).
	TokenInURL bool
}

// NewLine wires the store and the signing keys into the domain service.
func NewLine(store Store, keys *token.Keyset, o LineOptions) *Line {
	l := &Line{store: store, keys: keys, clock: o.Clock, log: o.Logger, jitter: o.Jitter, newID: o.NewID, draw: o.Draw,
		open: o.LineOpen, snap: o.Snapshot, server: o.Server, tokenInURL: o.TokenInURL, cache: make(map[string]cachedRoom), eta: NewEstimator(),
		drawn: make(map[string]drawSeen)}
	if l.server == "" {
		l.server = serverName()
	}
	if l.clock == nil {
		l.clock = clockwork.NewRealClock()
	}
	if l.log == nil {
		l.log = slog.Default()
	}
	// Paced by real time whatever the line's clock: it is I/O, not a rule.
	l.positions = NewPositions(store, PositionsOptions{Logger: l.log})
	if l.snap != nil {
		rooms, epoch, err := l.snap.Load(context.Background())
		if err != nil {
			l.log.Warn("queue: load room snapshot", "err", err)
		}
		// Loaded as stale (zero time): Redis is asked first whenever it answers.
		for id, s := range rooms {
			l.cache[id] = cachedRoom{settings: s}
		}
		l.snapEpoch = epoch
	}
	if l.jitter == nil {
		l.jitter = DefaultJitter
	}
	if l.newID == nil {
		l.newID = RandomID
	}
	if l.draw == nil {
		l.draw = CryptoDraw
	}
	return l
}

// DrawRange bounds a random line's draws: 2^48, so every draw is exact in a
// Lua number, Lua's % on it is exact, and draw % waiting is uniform to
// within waiting/2^48.
const DrawRange = 1 << 48

// CryptoDraw is a uniform draw in [0, DrawRange) from crypto/rand: a lottery
// must not be predictable from the draws before.
func CryptoDraw() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint64(b[:]) >> 16
}

// DefaultJitter is a uniform random delay in [0, max).
func DefaultJitter(max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	return time.Duration(mrand.Int64N(int64(max)))
}

// RandomID returns 128 random bits as hex.
func RandomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Keys returns the signing keys.
func (l *Line) Keys() *token.Keyset { return l.keys }

// Now is the line's clock.
func (l *Line) Now() time.Time { return l.clock.Now() }

// A room's settings are read three ways, by what the reader can bear:
//   - Settings: a visitor's request. This server's cache while it is fresh
//     (settingsFresh; a settings change makes it stale at once, Listen),
//     else the store, cached; the last known while the store fails.
//   - CachedSettings: the degraded path. The cache only, never the store.
//   - StoredSettings: an operator. The store only, past the cache: what an
//     operator sees and edits must be what is stored.

// Settings returns a room's settings as a visitor's request reads them: from
// the cache while it is fresh, else from the store (then cached).
func (l *Line) Settings(ctx context.Context, room string) (Settings, error) {
	now := l.clock.Now()
	l.mu.Lock()
	c, ok := l.cache[room]
	since := l.puts
	l.mu.Unlock()
	if ok && now.Sub(c.at) < settingsFresh {
		return c.settings, nil
	}
	s, err := l.store.GetRoom(ctx, room)
	if errors.Is(err, ErrRoomNotFound) {
		// Left in the cache: the admission loop decides whether the room was
		// deleted (forget it) or lost by a Redis restart (put it back).
		return Settings{}, err
	}
	if err != nil {
		if ok {
			return c.settings, nil // Redis is down: the last known settings serve degraded mode
		}
		return Settings{}, err
	}
	l.remember(room, s, now, since)
	return s, nil
}

// CachedSettings returns the last known settings of room without asking
// the store: the degraded path must not probe a Redis that is down.
func (l *Line) CachedSettings(room string) (Settings, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.cache[room]
	return c.settings, ok
}

// cachedRooms copies the cache: every room this server knows.
func (l *Line) cachedRooms() map[string]Settings {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]Settings, len(l.cache))
	for id, c := range l.cache {
		out[id] = c.settings
	}
	return out
}

// putsNow is the count of PutRoom calls a store read of settings starts at.
func (l *Line) putsNow() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.puts
}

// remember caches settings read from the store, unless a PutRoom on this
// server came between the read's start (since: putsNow) and now: the read
// may hold what that put replaced (the admission loop's read finishing
// after an operator's change kept the old settings a tick).
func (l *Line) remember(room string, s Settings, now time.Time, since uint64) {
	l.mu.Lock()
	if l.puts != since {
		l.mu.Unlock()
		return
	}
	l.cache[room] = cachedRoom{settings: s, at: now}
	l.mu.Unlock()
	l.eta.Observe(room, &s, now)
	if l.snap != nil {
		if err := l.snap.SaveRoom(context.Background(), room, s); err != nil {
			l.log.Warn("queue: save room snapshot", "room", room, "err", err)
		}
	}
}

func (l *Line) forget(room string) {
	l.mu.Lock()
	delete(l.cache, room)
	l.mu.Unlock()
	l.places.forget(room)
	if l.snap != nil {
		if err := l.snap.DeleteRoom(context.Background(), room); err != nil {
			l.log.Warn("queue: delete room snapshot", "room", room, "err", err)
		}
	}
}

// sawEpoch keeps Redis's data epoch in the snapshot, so a restarted server
// still notices that Redis lost its data while it was away.
func (l *Line) sawEpoch(epoch string) {
	if l.snap == nil {
		return
	}
	if err := l.snap.SaveEpoch(context.Background(), epoch); err != nil {
		l.log.Warn("queue: save epoch snapshot", "err", err)
	}
}

// PutRoom creates or replaces a room.
func (l *Line) PutRoom(ctx context.Context, room string, s Settings) error {
	if s.OpensAt == nil {
		if err := l.keepUndrawnOpening(ctx, room, &s); err != nil {
			return err
		}
	}
	if err := l.store.PutRoom(ctx, room, s); err != nil {
		return err
	}
	l.mu.Lock()
	l.puts++
	since := l.puts
	l.mu.Unlock()
	l.remember(room, s, l.clock.Now(), since)
	return nil
}

// keepUndrawnOpening turns a cleared opens_at into "opens now" while the
// stored opening has not been drawn: the draw runs only for a room with an
// opening, so clearing it would strand the pre-queue, who would never be
// drawn while later arrivals were let in.
func (l *Line) keepUndrawnOpening(ctx context.Context, room string, s *Settings) error {
	old, err := l.store.GetRoom(ctx, room)
	if errors.Is(err, ErrRoomNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if old.OpensAt == nil {
		return nil
	}
	last, ok, err := l.store.LastDraw(ctx, room)
	if err != nil {
		return err
	}
	if ok && last.OpensAt.Equal(*old.OpensAt) {
		return nil
	}
	now := l.clock.Now().UTC().Truncate(time.Millisecond)
	s.OpensAt = &now
	return nil
}

// StoredSettings reads a room's settings from the store, past the cache:
// what an operator sees must be what is stored.
func (l *Line) StoredSettings(ctx context.Context, room string) (Settings, error) {
	return l.store.GetRoom(ctx, room)
}

// ListRooms lists every room in the store, sorted.
func (l *Line) ListRooms(ctx context.Context) ([]string, error) { return l.store.ListRooms(ctx) }

// Stats reads a room's counters at now.
func (l *Line) Stats(ctx context.Context, room string, now time.Time) (Stats, error) {
	return l.store.Stats(ctx, room, now)
}

// Listen delivers admissions and settings changes from every server sharing
// the store, until ctx ends.
// A room change makes the cached settings stale first, so pages pushed
// because of it (sold out, undone) are read with the new settings.
func (l *Line) Listen(ctx context.Context, onAdmit func(room string, adm []Admitted), onRoom func(room string)) error {
	return l.store.Listen(ctx, onAdmit, func(room string) {
		l.mu.Lock()
		if c, ok := l.cache[room]; ok {
			c.at = time.Time{}
			l.cache[room] = c
		}
		l.mu.Unlock()
		onRoom(room)
	})
}

// Probe asks the store whether it answers and for the deployment's drill:
// the availability flag's Probe.
func (l *Line) Probe(ctx context.Context) (*bool, error) { return l.store.Probe(ctx) }

// SetDrill stores the degraded-mode drill for every server; nil returns to automatic.
func (l *Line) SetDrill(ctx context.Context, on *bool) error { return l.store.SetDrill(ctx, on) }

// DeleteRoom removes a room and its whole line.
func (l *Line) DeleteRoom(ctx context.Context, room string) error {
	l.forget(room)
	return l.store.DeleteRoom(ctx, room)
}

// Enter puts identity in the room's line, or returns its live ticket.
func (l *Line) Enter(ctx context.Context, room, identity string) (Ticket, Settings, error) {
	return l.EnterWith(ctx, room, identity, EntryProof{})
}

// EnterWith is Enter where a new place costs proof (see EntryProof): a live
// ticket comes back without one.
func (l *Line) EnterWith(ctx context.Context, room, identity string, proof EntryProof) (Ticket, Settings, error) {
	s, err := l.Settings(ctx, room)
	if err != nil {
		return Ticket{}, Settings{}, err
	}
	now := l.clock.Now()
	mode := AdmissionOf(&s, now, l.open == nil || l.open(room))
	if mode != AdmitClosed && l.drawPending(room, &s, now) {
		mode = AdmitPaused // a place behind the draw, nobody let in ahead of it
	}
	t, err := l.store.Enter(ctx, room, &s, mode, identity, l.newID(), now, l.jitter(time.Duration(s.JitterMS)*time.Millisecond), proof)
	t.Show(&s)
	if err == nil {
		l.floor(room, &s, &t)
	}
	return t, s, err
}

// Status reads identity's ticket; it is the waiter's sign of life.
func (l *Line) Status(ctx context.Context, room, ticketID, identity string) (Ticket, Settings, error) {
	s, err := l.Settings(ctx, room)
	if err != nil {
		return Ticket{}, Settings{}, err
	}
	t, err := l.store.Status(ctx, room, &s, ticketID, identity, l.clock.Now())
	t.Show(&s)
	if err == nil {
		l.floor(room, &s, &t)
	}
	return t, s, err
}

// StatusMany reads many tickets of one room in one round trip.
func (l *Line) StatusMany(ctx context.Context, room string, ids []string) ([]Ticket, Settings, error) {
	s, err := l.Settings(ctx, room)
	if err != nil {
		return nil, Settings{}, err
	}
	ts, err := l.store.StatusMany(ctx, room, &s, ids, l.clock.Now())
	for i := range ts {
		ts[i].Show(&s)
		if err == nil {
			l.floor(room, &s, &ts[i])
		}
	}
	return ts, s, err
}

// Alive marks waiting tickets seen now, in one call: the sign of life of
// this server's open connections in room.
func (l *Line) Alive(ctx context.Context, room string, ids []string) error {
	return l.store.Alive(ctx, room, ids, l.clock.Now())
}

// Present replaces this server's snapshot of its open connections in
// room (Changes.Present): server names this process, and a new process
// takes a new name, so that it never replaces the snapshot of one before.
func (l *Line) Present(ctx context.Context, room, server string, open []string) error {
	return l.store.Present(ctx, room, server, open, l.clock.Now())
}

// Leave gives up identity's ticket.
func (l *Line) Leave(ctx context.Context, room, ticketID, identity string) error {
	if _, err := l.Settings(ctx, room); err != nil {
		return err
	}
	return l.store.Leave(ctx, room, ticketID, identity, l.clock.Now())
}

// Tick runs one admission step for room with fresh jitters, and in a random
// line fresh draws: one per slot; first the scheduled opening's draw when it
// is due.
func (l *Line) Tick(ctx context.Context, room string, s *Settings) (TickResult, error) {
	if now := l.clock.Now(); l.drawDue(room, s, now) {
		if err := l.drawOpening(ctx, room, *s.OpensAt, now); err != nil {
			return TickResult{}, err
		}
	}
	eff := s.ticking()
	jitters := make([]time.Duration, eff.BatchSize)
	max := time.Duration(eff.JitterMS) * time.Millisecond
	for i := range jitters {
		jitters[i] = l.jitter(max)
	}
	var draws []uint64
	if !eff.Ranked() {
		draws = make([]uint64, eff.BatchSize)
		for i := range draws {
			draws[i] = l.draw() % DrawRange
		}
	}
	return l.store.Tick(ctx, room, &eff, l.clock.Now(), jitters, draws)
}

// Token signs the entry token of an admitted ticket. Ed25519 signatures are
// deterministic, so re-signing on every read yields the same token.
func (l *Line) Token(t Ticket) (string, error) {
	if t.State != vocab.StateAdmitted {
		return "", nil
	}
	intent, _ := l.HeldIntent(t.Room, t.Identity) // the holder also left an intent: checkout refuses a second order
	tok, err := l.keys.Sign(token.EntryClaims{
		Issuer: l.keys.Issuer, Room: t.Room, Subject: t.Subject(), TicketID: t.ID,
		IssuedAt: t.AdmittedAt, NotBefore: t.OrderableAt, ExpiresAt: t.ExpiresAt, Intent: intent,
	})
	if err != nil {
		return "", fmt.Errorf("queue: sign entry token: %w", err)
	}
	return tok, nil
}

// Verdict is the answer to "may this token's holder check out now?".
type Verdict struct {
	Valid  bool
	Claims token.EntryClaims
	Reason string // empty when valid: malformed, forged, wrong_room, expired, not_yet_valid, completed, reclaimed, no_show, idle, left, unknown
}

// Verify checks a token's signature, times and room, then that its slot is
// still held, so completed and reclaimed tokens stop verifying at once. A
// token verified is its visitor arriving at checkout (Tickets.Arrive): the
// gate, forward auth and POST /api/tokens/verify all come through here.
func (l *Line) Verify(ctx context.Context, tok, room string) (Verdict, error) {
	return l.verify(ctx, tok, room, true)
}

// Check is Verify without the arrival: whether the token's slot is held now,
// asked by someone who is not the visitor's checkout (an anonymous POST
// /api/tokens/verify: anyone with a copy of the token could otherwise keep
// a squatted slot from lapsing as a no-show, or move its idle deadline).
func (l *Line) Check(ctx context.Context, tok, room string) (Verdict, error) {
	return l.verify(ctx, tok, room, false)
}

func (l *Line) verify(ctx context.Context, tok, room string, arrive bool) (Verdict, error) {
	now := l.clock.Now()
	c, err := l.keys.Verify(tok, now)
	if err != nil {
		return Verdict{Claims: c, Reason: token.Reason(err)}, nil
	}
	if room != "" && c.Room != room {
		return Verdict{Claims: c, Reason: "wrong_room"}, nil
	}
	if !ValidRoomID(c.Room) {
		return Verdict{Claims: c, Reason: "forged"}, nil
	}
	// A token shown here is its visitor at checkout: the slot is used.
	var ok bool
	var reason string
	if arrive {
		ok, reason, err = l.store.Arrive(ctx, c.Room, c.TicketID, now, l.idleAfter(ctx, c.Room))
	} else {
		ok, reason, err = l.store.Active(ctx, c.Room, c.TicketID, now)
	}
	if err != nil {
		return Verdict{}, err
	}
	if !ok {
		return Verdict{Claims: c, Reason: reason}, nil
	}
	return Verdict{Valid: true, Claims: c}, nil
}

// idleAfter is the room's idle_after_s, from the settings cached by the
// admission loop; a room that cannot be read has none.
func (l *Line) idleAfter(ctx context.Context, room string) time.Duration {
	s, err := l.Settings(ctx, room)
	if err != nil {
		return 0
	}
	return time.Duration(s.IdleAfterS) * time.Second
}

// Complete frees the slot of a valid token's ticket.
func (l *Line) Complete(ctx context.Context, tok, room string) (Verdict, error) {
	v, err := l.Verify(ctx, tok, room)
	if err != nil || !v.Valid {
		return v, err
	}
	if err := l.store.Complete(ctx, v.Claims.Room, v.Claims.TicketID, l.clock.Now()); err != nil {
		if errors.Is(err, ErrTicketNotFound) {
			return Verdict{Claims: v.Claims, Reason: vocab.ReasonCompleted}, nil
		}
		return Verdict{}, err
	}
	return v, nil
}

// Estimate is a ticket's estimated wait now (eta.go): this server's
// estimator, re-based whenever this line loads a room's new settings.
func (l *Line) Estimate(t Ticket, s *Settings) Estimate {
	return l.eta.Ticket(t, s, l.clock.Now())
}
