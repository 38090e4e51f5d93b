package queue

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"os"
	"time"
)

// ErrDrawStale: the pre-queue changed between reading it and drawing it
// (an entry or a leave came in between); the draw is read and shuffled again.
var ErrDrawStale = errors.New("queue: pre-queue changed while drawing")

// ErrNotScheduled: "open now" on a room with no opening ahead.
var ErrNotScheduled = errors.New("queue: the room has no opening ahead")

// drawTries bounds how often one tick re-reads a pre-queue that keeps
// changing; the next tick tries again.
const drawTries = 3

// lateWindow is how long after a draw this server's ticks still look for
// late pre-queue entries: a server whose settings are up to a few seconds
// stale (settingsFresh, clock skew) may put an entry in the pre-queue after
// the draw; it then joins the back of the line, as any latecomer.
const lateWindow = 30 * time.Second

// DrawRecord is the audit record of a scheduled opening's draw, kept with
// the room: which opening, when it ran, how many were drawn, on which
// server, and the SHA-256 of the drawn order (ticket ids, one per line).
type DrawRecord struct {
	OpensAt   time.Time `json:"opens_at"`
	At        time.Time `json:"at"`
	Drawn     int64     `json:"drawn"`
	Server    string    `json:"server"`
	OrderHash string    `json:"order_sha256"`
}

// PreQueued is a place in a scheduled opening's pre-queue: its ticket id and
// the client network it was taken from ("" when unknown).
type PreQueued struct {
	ID, Network string
}

// Draws is the port of the scheduled opening's draw.
type Draws interface {
	// PreQueue lists the room's pre-queue in arrival order.
	PreQueue(ctx context.Context, room string) ([]PreQueued, error)
	// Draw puts the pre-queue, in order, ahead of everyone in the line and
	// keeps rec, once per opening (rec.OpensAt): when that opening was drawn
	// already it only moves late pre-queue entries (at most MaxScan) to the
	// back of the line, by arrival. order must be exactly the pre-queue, or
	// it answers ErrDrawStale and changes nothing. It reports whether this
	// call drew, and how many late entries it moved.
	Draw(ctx context.Context, room string, rec DrawRecord, order []string, now time.Time) (drew bool, late int64, err error)
	// LastDraw reads the record of the room's last draw; false when none ran.
	LastDraw(ctx context.Context, room string) (DrawRecord, bool, error)
}

// Shuffle returns ids in a uniformly random order: Fisher–Yates with
// crypto/rand, so nobody can predict or bias the draw from its outputs.
func Shuffle(ids []string) ([]string, error) {
	out := append([]string(nil), ids...)
	for i := len(out) - 1; i > 0; i-- {
		j, err := rand.Int(rand.Reader, big.NewInt(int64(i+1)))
		if err != nil {
			return nil, fmt.Errorf("queue: shuffle: %w", err)
		}
		k := j.Int64()
		out[i], out[k] = out[k], out[i]
	}
	return out, nil
}

// DrawOrder is the drawn order of a pre-queue: in rounds, each network's
// places in a random order, the first round every network's first place,
// then every network's second, and so on; each round in a random order of
// its own. A network with one place has the chance of every other in the
// first round, while a network that bought a thousand places (a bot farm
// behind one address) has one place a round: its second comes after every
// network's first. A place with no network known is a network of its own.
// The randomness is crypto/rand's (Shuffle).
func DrawOrder(places []PreQueued) ([]string, error) {
	ids := make([]string, len(places))
	for i, p := range places {
		ids[i] = p.ID
	}
	mixed, err := Shuffle(ids)
	if err != nil {
		return nil, err
	}
	net := make(map[string]string, len(places))
	for _, p := range places {
		if p.Network != "" {
			net[p.ID] = p.Network
		}
	}
	// rounds[r] holds each network's r-th place of the shuffle. It must be
	// shuffled again: the shuffle's order would put first the networks
	// whose first place came early, which a network of many places does.
	var rounds [][]string
	seen := make(map[string]int)
	for _, id := range mixed {
		r := 0
		if n, ok := net[id]; ok {
			r = seen[n]
			seen[n]++
		}
		if r == len(rounds) {
			rounds = append(rounds, nil)
		}
		rounds[r] = append(rounds[r], id)
	}
	order := make([]string, 0, len(places))
	for _, r := range rounds {
		r, err := Shuffle(r)
		if err != nil {
			return nil, err
		}
		order = append(order, r...)
	}
	return order, nil
}

// OrderHash is the SHA-256 (hex) of a drawn order, ticket ids one per line:
// an auditor holding the order can check it against the record.
func OrderHash(order []string) string {
	h := sha256.New()
	for _, id := range order {
		h.Write([]byte(id))
		h.Write([]byte("\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// serverName names this server in draw records.
func serverName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return fmt.Sprintf("%s/%d", host, os.Getpid())
}

// drawSeen is the opening this server last saw drawn for a room, and when.
type drawSeen struct {
	opens, at time.Time
}

// drawDue reports whether a tick at now must run room's draw: its opening
// has come and this server has not seen it drawn, or saw it drawn so
// recently that late pre-queue entries may still arrive.
func (l *Line) drawDue(room string, s *Settings, now time.Time) bool {
	if s.OpensAt == nil || now.Before(*s.OpensAt) {
		return false
	}
	l.mu.Lock()
	d, ok := l.drawn[room]
	l.mu.Unlock()
	return !ok || !d.opens.Equal(*s.OpensAt) || now.Sub(d.at) < lateWindow
}

// drawPending reports whether room's opening has come but this server has
// not seen it drawn. Entries then join the line without being let in at
// once: the pre-queue, once drawn, goes ahead of them. A newcomer after the
// opening has no claim to a random place (that would reward pressing at the
// opening), so it queues behind the draw, first come first served.
func (l *Line) drawPending(room string, s *Settings, now time.Time) bool {
	if s.OpensAt == nil || now.Before(*s.OpensAt) {
		return false
	}
	l.mu.Lock()
	d, ok := l.drawn[room]
	l.mu.Unlock()
	return !ok || !d.opens.Equal(*s.OpensAt)
}

// drawOpening runs the opening's draw for room: read the pre-queue, order it
// here (DrawOrder), and hand the order to the store, which keeps it only if nobody drew
// this opening before (one draw across all servers). Nothing is written
// until the store's one atomic step, so a crash before it loses nobody and
// the next tick, on any server, draws again.
func (l *Line) drawOpening(ctx context.Context, room string, opens, now time.Time) error {
	for try := 0; try < drawTries; try++ {
		places, err := l.store.PreQueue(ctx, room)
		if err != nil {
			return err
		}
		order, err := DrawOrder(places)
		if err != nil {
			return err
		}
		rec := DrawRecord{OpensAt: opens, At: now, Drawn: int64(len(order)), Server: l.server, OrderHash: OrderHash(order)}
		drew, late, err := l.store.Draw(ctx, room, rec, order, now)
		if errors.Is(err, ErrDrawStale) {
			continue
		}
		if err != nil {
			return err
		}
		if drew {
			l.log.Info("queue: drew the pre-queue", "room", room, "opens_at", opens, "drawn", rec.Drawn, "order_sha256", rec.OrderHash)
		}
		if late > 0 {
			l.log.Info("queue: late pre-queue entries joined the back of the line", "room", room, "late", late)
		}
		l.mu.Lock()
		if d, ok := l.drawn[room]; !ok || !d.opens.Equal(opens) {
			l.drawn[room] = drawSeen{opens: opens, at: now}
		}
		l.mu.Unlock()
		return nil
	}
	return fmt.Errorf("queue: draw %s: %w", room, ErrDrawStale)
}

// LastDraw reads the record of room's last draw; false when none ran.
func (l *Line) LastDraw(ctx context.Context, room string) (DrawRecord, bool, error) {
	return l.store.LastDraw(ctx, room)
}

// OpenNow moves room's scheduled opening to now, so the next tick (on any
// server) draws the pre-queue. It returns the settings as stored, or
// ErrNotScheduled when no opening is ahead.
func (l *Line) OpenNow(ctx context.Context, room string) (Settings, error) {
	s, err := l.store.GetRoom(ctx, room)
	if err != nil {
		return Settings{}, err
	}
	now := l.clock.Now().UTC().Truncate(time.Millisecond)
	if !s.Scheduled(now) {
		return Settings{}, ErrNotScheduled
	}
	s.OpensAt = &now
	if err := l.PutRoom(ctx, room, s); err != nil {
		return Settings{}, err
	}
	return s, nil
}
