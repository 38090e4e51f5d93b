package dashboard

import (
	"context"
	"time"

	"github.com/waitroom/waitroom/internal/operator/adminops"
	"github.com/waitroom/waitroom/internal/operator/history"
	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/queue"
)

// Line is what the dashboard needs of *queue.Line: room writes go through it
// so its settings cache stays current, and the line is the one holder of
// rooms' settings the dashboard reads (Settings, CachedSettings) besides the store.
type Line interface {
	StoredSettings(ctx context.Context, room string) (queue.Settings, error)
	Settings(ctx context.Context, room string) (queue.Settings, error)
	CachedSettings(room string) (queue.Settings, bool)
	ListRooms(ctx context.Context) ([]string, error)
	Stats(ctx context.Context, room string, now time.Time) (queue.Stats, error)
	Listen(ctx context.Context, onAdmit func(room string, adm []queue.Admitted), onRoom func(room string)) error
	SetDrill(ctx context.Context, on *bool) error
	PutRoom(ctx context.Context, room string, s queue.Settings) error
	DeleteRoom(ctx context.Context, room string) error
	Now() time.Time
	// The scheduled opening (opening.go).
	LastDraw(ctx context.Context, room string) (queue.DrawRecord, bool, error)
	OpenNow(ctx context.Context, room string) (queue.Settings, error)
}

// Availability is this server's degraded-mode flag (*queue.Availability).
type Availability = adminops.Flag

// OutboxCounter reads the degraded path's intents by status (*outbox.Outbox).
type OutboxCounter interface {
	Counts(ctx context.Context) (outbox.Counts, error)
}

// Activation is an adaptive room's line: on or off, and why. Cause
// (internal/operator/adaptive's Why: "new", "opened", "closed") and its figures are
// what the page says in its language; Reason is the English words, shown
// only for a state without a cause. SignalError is the last failed read's
// error ("" when the signal was read).
type Activation struct {
	On                 bool
	Reason             string
	Cause              string
	Reading, Threshold float64
	Windows            int64
	SignalError        string
}

// ActivationReader reports what the adaptive controller decided for a room;
// ok is false when it has no reading for it.
type ActivationReader interface {
	ActivationState(room string) (a Activation, ok bool)
}

// ActivationFunc adapts a function (e.g. around internal/operator/adaptive's State) to
// ActivationReader.
type ActivationFunc func(room string) (Activation, bool)

// ActivationState calls f.
func (f ActivationFunc) ActivationState(room string) (Activation, bool) { return f(room) }

// WaitStats reports quantiles of the time admitted visitors waited in a
// room; ok is false when there is nothing to report.
type WaitStats interface {
	WaitQuantiles(room string) (p50, p95 time.Duration, ok bool)
}

// FailureCounter counts wrong admin tokens per client network
// (*throttle.Failures, shared with the admin API and across servers).
type FailureCounter interface {
	Failed(ctx context.Context, client string) (time.Duration, bool)
}

// Revocations is where a signed-out session is recorded for every server
// (RedisRevocations), until the session's own expiry.
type Revocations interface {
	Revoke(ctx context.Context, id string, until time.Time) error
	Revoked(ctx context.Context, id string) (bool, error)
}

// History keeps rooms' minutes for the sale's history (*history.Store).
type History interface {
	Record(ctx context.Context, room string, at time.Time, r history.Reading) (bool, error)
	Add(room string, at time.Time, f history.Figure, n int64)
	Flush(ctx context.Context) error
	Window(ctx context.Context, room, from, to string, now time.Time) (time.Time, time.Time, error)
	Load(ctx context.Context, room string, from, to, now time.Time, live func(context.Context) (history.Reading, error)) (history.Report, error)
	Keep() time.Duration
}
