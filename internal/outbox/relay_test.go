package outbox_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/outbox"
)

// With the broker down, accepts stay pending while the relay fails and
// backs off on its clock; once the broker is back the next retry publishes.
func TestRelayRetriesWhileBrokerIsDown(t *testing.T) {
	ctx := testCtx(t)
	br := startBroker(t)
	s := openStore(t, dbPath(t))
	clock := clockwork.NewFakeClock()
	onPass, ch := passes()
	relay := outbox.NewRelay(s, newPublisher(t, br), outbox.RelayConfig{
		Clock: clock, Logger: quiet, OnPass: onPass,
		Interval: 10 * time.Second, MinBackoff: time.Second,
	})
	runInBackground(t, relay.Run)
	if p := awaitPass(t, ch); p.n != 0 || p.err != nil {
		t.Fatalf("start pass: %+v", p)
	}

	// A kick publishes at once: no clock needed.
	in, _, _ := s.Accept(ctx, "drop", "early", payload(0))
	relay.Kick()
	if p := awaitPass(t, ch); p.n != 1 || p.err != nil {
		t.Fatalf("kicked pass: %+v", p)
	}

	br.Stop()
	var down []string
	for i := range 5 {
		in, _, err := s.Accept(ctx, "drop", fmt.Sprintf("v%d", i), payload(i))
		if err != nil {
			t.Fatalf("accept while the broker is down: %v", err)
		}
		down = append(down, in.ID)
	}
	relay.Kick()
	if p := awaitPass(t, ch); p.err == nil || p.n != 0 {
		t.Fatalf("pass with the broker down: %+v; want a failure", p)
	}
	// Failures back off 1 s, 2 s, ...; each retry fails while the broker is down.
	for _, wait := range []time.Duration{time.Second, 2 * time.Second} {
		if err := clock.BlockUntilContext(ctx, 1); err != nil {
			t.Fatal(err)
		}
		clock.Advance(wait)
		if p := awaitPass(t, ch); p.err == nil {
			t.Fatalf("retry after %v with the broker down: %+v; want a failure", wait, p)
		}
	}
	if c, _ := s.Counts(ctx); c.Accepted != 5 || c.Published != 1 {
		t.Fatalf("while down counts = %+v; want 5 accepted, 1 published", c)
	}

	br.Restart()
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(4 * time.Second)
	if p := awaitPass(t, ch); p.n != 5 || p.err != nil {
		t.Fatalf("retry after the broker came back: %+v; want 5 published", p)
	}
	if c, _ := s.Counts(ctx); c != (outbox.Counts{Published: 6}) {
		t.Fatalf("counts = %+v; want 6 published", c)
	}
	got := map[string]bool{}
	for _, m := range br.Read(t, outbox.DefaultIntentsTopic, 6) {
		got[decodeIntent(t, m).IntentID] = true
	}
	for _, id := range append(down, in.ID) {
		if !got[id] {
			t.Errorf("intent %s not in the topic", id)
		}
	}

	// Healthy again: the sweep runs every Interval, and kicks work at once.
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(10 * time.Second)
	if p := awaitPass(t, ch); p.n != 0 || p.err != nil {
		t.Fatalf("sweep: %+v", p)
	}
}

func TestRelayBackoff(t *testing.T) {
	r := outbox.NewRelay(nil, nil, outbox.RelayConfig{})
	want := []string{"1s", "2s", "4s", "8s", "10s", "10s"}
	for i, w := range want {
		if got := r.Backoff(i + 1); got != w {
			t.Errorf("backoff after %d failures = %s, want %s", i+1, got, w)
		}
	}
}

// The message is exactly what the shop's consumer decodes.
func TestIntentMessageFormat(t *testing.T) {
	ctx := testCtx(t)
	br := startBroker(t)
	s := openStore(t, dbPath(t))
	in, _, _ := s.Accept(ctx, "drop", "alice", json.RawMessage(`{"sku":"x","qty":2}`))
	relay := outbox.NewRelay(s, newPublisher(t, br), outbox.RelayConfig{Logger: quiet})
	if n, err := relay.Flush(ctx); n != 1 || err != nil {
		t.Fatalf("flush = %d, %v", n, err)
	}
	m := br.Read(t, outbox.DefaultIntentsTopic, 1)[0]
	if string(m.Key) != "drop/alice" || header(m, "intent_id") != in.ID || header(m, "idempotency_key") != in.Key || in.Key == "" {
		t.Fatalf("key %q, header intent_id %q, idempotency_key %q (want %q)", m.Key, header(m, "intent_id"), header(m, "idempotency_key"), in.Key)
	}
	var v map[string]json.RawMessage
	if err := json.Unmarshal(m.Value, &v); err != nil {
		t.Fatal(err)
	}
	if len(v) != 6 {
		t.Errorf("fields %v, want exactly intent_id, idempotency_key, room, visitor, payload, accepted_at", v)
	}
	for k, want := range map[string]string{
		"intent_id": `"` + in.ID + `"`, "idempotency_key": `"` + in.Key + `"`, "room": `"drop"`, "visitor": `"alice"`, "payload": `{"sku":"x","qty":2}`,
	} {
		if string(v[k]) != want {
			t.Errorf("%s = %s, want %s", k, v[k], want)
		}
	}
	var at string
	_ = json.Unmarshal(v["accepted_at"], &at)
	if ts, err := time.Parse(time.RFC3339Nano, at); err != nil || !ts.Equal(in.AcceptedAt) {
		t.Errorf("accepted_at %q (%v), want %v", at, err, in.AcceptedAt)
	}
}
