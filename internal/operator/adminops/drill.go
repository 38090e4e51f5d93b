package adminops

import (
	"context"
	"log/slog"

	"github.com/waitroom/waitroom/queue"
)

// Flag is this server's degraded-mode flag (*queue.Availability).
type Flag interface {
	State() queue.AvailabilityState
	Force(on *bool)
}

// DrillStore carries a drill to every server.
type DrillStore interface {
	SetDrill(ctx context.Context, on *bool) error
}

// DrillState answers a drill: this server's state, and whether the other
// servers were told (false while Redis does not answer).
type DrillState struct {
	queue.AvailabilityState
	AllServers bool `json:"all_servers"`
}

// SetDrill forces degraded mode (on true) or ends the drill (false or nil:
// back to the automatic checks). It reaches the other servers through
// Redis when Redis answers, and applies here whatever Redis says. Redis is
// told first: this server's probe that reads it from then on reads the
// drill, and one that read it before is older than the Force below and
// dropped (queue.Availability), so the drill never flips back here.
func SetDrill(ctx context.Context, flag Flag, store DrillStore, on *bool) DrillState {
	shared := store.SetDrill(ctx, on) == nil
	flag.Force(on)
	return DrillState{AvailabilityState: flag.State(), AllServers: shared}
}

// DrillChange is a drill's audit entry.
func DrillChange(on *bool, st DrillState) Change {
	return Change{What: Drill, Attrs: []slog.Attr{slog.String("mode", DrillMode(on)), slog.Bool("all_servers", st.AllServers)}}
}

// DrillMode names a drill for the log: on, or auto (false ends a drill as
// nil does: normal mode is never forced, see queue.Availability.Force).
func DrillMode(on *bool) string {
	if on != nil && *on {
		return "on"
	}
	return "auto"
}
