package gate

import (
	"time"

	"github.com/waitroom/waitroom/internal/gate/gatekit"
)

// Meter measures calls to the upstream: in flight now, and latency (time
// to the answer's headers) over a sliding window of the last minute or the
// last 4096 calls, whichever is shorter. One Meter may be shared by the
// proxy and whatever reads it; it is safe for concurrent use.
type Meter = gatekit.Meter

// MeterOptions tune a Meter; zero values take the defaults.
type MeterOptions = gatekit.MeterOptions

// Snapshot is a Meter at one moment, JSON-ready for the dashboard.
type Snapshot = gatekit.Snapshot

// NewMeter returns a meter with no calls.
func NewMeter(o MeterOptions) *Meter { return gatekit.NewMeter(o) }

// Signals is what adaptive activation reads of a gate: how many requests
// the upstream holds now (for gate_inflight ÷ capacity) and how slow it
// answered lately (for gate_latency ÷ latency_target_ms).
type Signals interface {
	InFlight() int64
	P95() time.Duration
}

var _ Signals = (*Meter)(nil)
