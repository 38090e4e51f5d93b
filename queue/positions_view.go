package queue

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/waitroom/waitroom/queue/positions"
)

// snapshotChunk bounds one LineScores read of a resync.
const snapshotChunk = 5000

// logBatch bounds the entries of one ReadLog.
const logBatch = 1000

// RoomView is one room's line as this server keeps it: the waiting scores,
// fed by the room's change log (Changes). A waiter's position is the number
// of scores below its own plus one, exactly what the store's rank gives at
// the same point of the log, at no cost to the store.
//
// Why a snapshot plus the entries after it is the line: the snapshot starts
// after the log entry H (LogHead) and reads q by score, so every score
// present throughout is read once. Each entry sets its scores present (Add)
// or absent (Del), so each score's state is the last entry touching it; a
// score no entry after H touches kept its state during the snapshot, which
// read it; any other is set by replaying every entry after H, in order,
// including those that happened while the snapshot was read.
type RoomView struct {
	store Changes
	room  string

	mu     sync.Mutex
	set    positions.Set
	pos    LogPos
	synced bool
}

// NewRoomView returns an empty view of room, not synced until Resync.
func NewRoomView(store Changes, room string) *RoomView {
	return &RoomView{store: store, room: room}
}

// Resync reads the line afresh: the log's head, then q by score in chunks.
func (v *RoomView) Resync(ctx context.Context) error {
	head, err := v.store.LogHead(ctx, v.room)
	if err != nil {
		return err
	}
	var all []float64
	var after *float64
	for {
		part, err := v.store.LineScores(ctx, v.room, after, snapshotChunk)
		if err != nil {
			return err
		}
		all = append(all, part...)
		if len(part) < snapshotChunk {
			break
		}
		last := part[len(part)-1]
		after = &last
	}
	v.mu.Lock()
	v.set.Reset(all)
	v.pos, v.synced = head, true
	v.mu.Unlock()
	return nil
}

// Step reads the entries after the view's place, waiting up to wait for
// one, and applies them. A gap (entries trimmed before this reader read
// them, or a room deleted and made again) unsyncs the view. It returns how
// many entries it applied.
func (v *RoomView) Step(ctx context.Context, wait time.Duration) (int, error) {
	v.mu.Lock()
	from, synced := v.pos, v.synced
	v.mu.Unlock()
	if !synced {
		return 0, fmt.Errorf("queue: positions of %s: step before resync", v.room)
	}
	es, err := v.store.ReadLog(ctx, v.room, from, logBatch, wait)
	if err != nil {
		return 0, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.pos != from {
		return 0, nil // resynced meanwhile
	}
	for i, e := range es {
		if e.N != v.pos.N+1 {
			v.synced = false
			return i, nil
		}
		for _, x := range e.Add {
			v.set.Add(x)
		}
		for _, x := range e.Del {
			v.set.Remove(x)
		}
		v.pos = e.LogPos
	}
	return len(es), nil
}

// Check compares the view's place with the log's head: a head behind it
// (the room deleted, the store emptied) unsyncs the view even when no new
// entry comes to show the gap.
func (v *RoomView) Check(ctx context.Context) error {
	head, err := v.store.LogHead(ctx, v.room)
	if err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if head.N < v.pos.N || (head.N == v.pos.N && head.ID != v.pos.ID) {
		v.synced = false
	}
	return nil
}

// Synced reports whether the view follows the log.
func (v *RoomView) Synced() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.synced
}

// Unsync makes the next use read the line afresh.
func (v *RoomView) Unsync() {
	v.mu.Lock()
	v.synced = false
	v.mu.Unlock()
}

// Position is the 1-based position of the waiter whose score is score and
// the number waiting; ok is false unless the view is synced and the score
// waits (the ticket may have been admitted, abandoned or have left).
func (v *RoomView) Position(score float64) (pos, waiting int64, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.synced || !v.set.Has(score) {
		return 0, int64(v.set.Len()), false
	}
	return int64(v.set.Below(score)) + 1, int64(v.set.Len()), true
}

// Waiting is the number waiting as the view knows it.
func (v *RoomView) Waiting() int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return int64(v.set.Len())
}
