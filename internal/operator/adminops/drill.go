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
// back to the automatic checks). It applies here at once, whatever Redis
// says, and reaches the other servers through Redis when Redis answers.
func SetDrill(ctx context.Context, flag Flag, store DrillStore, on *bool) DrillState {
	flag.Force(on)
	shared := store.SetDrill(ctx, on) == nil
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
