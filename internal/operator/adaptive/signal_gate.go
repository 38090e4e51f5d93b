package adaptive

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// GateStats is what the checkout gate measures of its upstream.
type GateStats interface {
	InFlight() int64    // requests to checkout in flight now
	P95() time.Duration // p95 latency of recent upstream requests
}

// GateSignal reads the gate: in-flight requests ÷ the room's capacity
// (gate_inflight), or p95 latency ÷ latency_target_ms (gate_latency).
//
// The gate measures this server's traffic only: the server that evaluates a
// window reads its own share, so gate_inflight fits a single gate, or a
// GateStats that sums every server's.
type GateSignal struct {
	Gate GateStats
}

var errNoGate = errors.New("no gate runs on this server")

func (g GateSignal) Read(_ context.Context, room string, s queue.Settings) (float64, error) {
	if g.Gate == nil {
		return 0, fmt.Errorf("adaptive: read gate: %w", errNoGate)
	}
	if s.Adaptive == nil {
		return 0, fmt.Errorf("adaptive: read gate: room %s has no adaptive settings", room)
	}
	switch s.Adaptive.Signal {
	case queue.SignalGateInflight:
		if s.Capacity <= 0 {
			return 0, fmt.Errorf("adaptive: read gate: room %s has no capacity", room)
		}
		return float64(g.Gate.InFlight()) / float64(s.Capacity), nil
	case queue.SignalGateLatency:
		if s.Adaptive.LatencyTargetMS <= 0 {
			return 0, fmt.Errorf("adaptive: read gate: room %s has no latency_target_ms", room)
		}
		target := time.Duration(s.Adaptive.LatencyTargetMS) * time.Millisecond
		return float64(g.Gate.P95()) / float64(target), nil
	}
	return 0, fmt.Errorf("adaptive: read gate: signal %q is not the gate's", s.Adaptive.Signal)
}
