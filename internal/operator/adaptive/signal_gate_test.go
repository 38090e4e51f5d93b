package adaptive_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/operator/adaptive"
	"github.com/waitroom/waitroom/queue"
)

type fakeGate struct {
	inflight int64
	p95      time.Duration
}

func (g fakeGate) InFlight() int64    { return g.inflight }
func (g fakeGate) P95() time.Duration { return g.p95 }

func gateSettings(signal string) queue.Settings {
	s := queue.DefaultSettings()
	s.Capacity = 40
	s.Activation = queue.ActivationAdaptive
	s.Adaptive = &queue.Adaptive{Signal: signal, LatencyTargetMS: 250, OpenAt: 0.7, CloseAt: 0.5, WindowS: 1, WindowsToClose: 3}
	return s
}

func TestGateSignal(t *testing.T) {
	ctx := context.Background()
	sig := adaptive.DefaultSignals(fakeGate{inflight: 30, p95: 400 * time.Millisecond})
	if v, err := sig.Read(ctx, "sale", gateSettings(queue.SignalGateInflight)); err != nil || v != 0.75 {
		t.Fatalf("in-flight 30 of capacity 40 = %v, %v; want 0.75", v, err)
	}
	if v, err := sig.Read(ctx, "sale", gateSettings(queue.SignalGateLatency)); err != nil || v != 1.6 {
		t.Fatalf("p95 400 ms of target 250 ms = %v, %v; want 1.6", v, err)
	}
	idle := adaptive.GateSignal{Gate: fakeGate{}}
	if v, err := idle.Read(ctx, "sale", gateSettings(queue.SignalGateLatency)); err != nil || v != 0 {
		t.Fatalf("idle gate: %v, %v", v, err)
	}

	noGate := adaptive.DefaultSignals(nil)
	if _, err := noGate.Read(ctx, "sale", gateSettings(queue.SignalGateInflight)); err == nil ||
		!strings.Contains(err.Error(), "no gate runs on this server") {
		t.Fatalf("no gate: %v", err)
	}
	s := gateSettings(queue.SignalGateLatency)
	s.Adaptive.LatencyTargetMS = 0
	if _, err := idle.Read(ctx, "sale", s); err == nil {
		t.Fatal("latency without a target read")
	}
	s.Adaptive.Signal = "cpu"
	if _, err := noGate.Read(ctx, "sale", s); err == nil || !strings.Contains(err.Error(), `no "cpu" signal`) {
		t.Fatalf("unknown signal: %v", err)
	}
}
