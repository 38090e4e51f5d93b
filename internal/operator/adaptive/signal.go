package adaptive

import (
	"context"
	"fmt"

	"github.com/waitroom/waitroom/queue"
)

// Signal reads a room's load. Readings are ratios compared with the room's
// open_at and close_at (e.g. 0.7 = 70 % CPU, or 70 % of checkout capacity).
type Signal interface {
	Read(ctx context.Context, room string, s queue.Settings) (float64, error)
}

// Signals picks the signal a room's settings name (adaptive.signal).
type Signals map[string]Signal

// DefaultSignals reads Prometheus over HTTP and the gate's own measures;
// gate may be nil on a server without a gate, and its signals then fail.
func DefaultSignals(gate GateStats) Signals {
	g := GateSignal{Gate: gate}
	return Signals{
		queue.SignalPrometheus:   NewPrometheusSignal(nil),
		queue.SignalGateInflight: g,
		queue.SignalGateLatency:  g,
	}
}

func (m Signals) Read(ctx context.Context, room string, s queue.Settings) (float64, error) {
	if s.Adaptive == nil {
		return 0, fmt.Errorf("adaptive: read signal: room %s has no adaptive settings", room)
	}
	sig, ok := m[s.Adaptive.Signal]
	if !ok || sig == nil {
		return 0, fmt.Errorf("adaptive: read signal: no %q signal on this server", s.Adaptive.Signal)
	}
	return sig.Read(ctx, room, s)
}
