package outbox_test

import (
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/outbox"
)

// The whole round trip through the API the HTTP side uses.
func TestOutboxRoundTrip(t *testing.T) {
	ctx := testCtx(t)
	br := startBroker(t)
	onPass, passCh := passes()
	appliedCh := make(chan applied, 64)
	ob, err := outbox.Open(outbox.Config{
		Dir:     t.TempDir(),
		Brokers: br.Addrs(),
		Logger:  quiet,
		OnPass:  onPass,
		OnApply: func(m, n int) { appliedCh <- applied{m, n} },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ob.Close(); err != nil {
			t.Error(err)
		}
	})
	runInBackground(t, ob.Run)
	awaitPass(t, passCh) // the start pass

	in, created, err := ob.Accept(ctx, "drop", "alice", payload(1))
	if err != nil || !created {
		t.Fatalf("accept: created %v, %v", created, err)
	}
	if again, created, _ := ob.Accept(ctx, "drop", "alice", payload(2)); created || again.ID != in.ID {
		t.Fatalf("repeat accept: %s created %v; want %s", again.ID, created, in.ID)
	}
	// Accept kicked the relay: published without waiting for the 10 s sweep.
	for p := awaitPass(t, passCh); p.n == 0; p = awaitPass(t, passCh) {
		if p.err != nil {
			t.Fatal(p.err)
		}
	}
	if got, err := ob.Get(ctx, in.ID); err != nil || got.Status != outbox.StatusPublished || got.Visitor != "alice" {
		t.Fatalf("after publish: %+v, %v", got, err)
	}
	m := br.Read(t, outbox.DefaultIntentsTopic, 1)[0]
	if id := decodeIntent(t, m).IntentID; id != in.ID {
		t.Fatalf("topic has %s, want %s", id, in.ID)
	}

	br.Write(t, outbox.DefaultResultsTopic, resultMsg(t, outbox.ResultMessage{IntentID: in.ID, Status: outbox.ResultRejected, Reason: "sold out"}))
	select {
	case a := <-appliedCh:
		if a.changed != 1 {
			t.Fatalf("result applied %+v", a)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("result not applied in 30 s")
	}
	got, err := ob.Get(ctx, in.ID)
	if err != nil || got.Status != outbox.StatusRejected || got.Reason != "sold out" || got.Visitor != "alice" {
		t.Fatalf("after result: %+v, %v", got, err)
	}
	if c, _ := ob.Counts(ctx); c != (outbox.Counts{Rejected: 1}) {
		t.Fatalf("counts = %+v", c)
	}
}

func TestOpenNeedsDirAndBrokers(t *testing.T) {
	if _, err := outbox.Open(outbox.Config{Brokers: []string{"127.0.0.1:9"}}); err == nil {
		t.Error("open without a data directory succeeded")
	}
	if _, err := outbox.Open(outbox.Config{Dir: t.TempDir()}); err == nil {
		t.Error("open without brokers succeeded")
	}
}

func TestStartEmbedded(t *testing.T) {
	b, err := outbox.StartEmbedded(outbox.EmbeddedConfig{Topics: []string{outbox.DefaultIntentsTopic, outbox.DefaultResultsTopic}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	addrs := b.Addrs()
	ctx := testCtx(t)
	s := openStore(t, dbPath(t))
	s.Accept(ctx, "drop", "alice", payload(1))
	pub, err := outbox.NewKafkaPublisher(outbox.KafkaConfig{Brokers: addrs})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if n, err := outbox.NewRelay(s, pub, outbox.RelayConfig{Logger: quiet}).Flush(ctx); n != 1 || err != nil {
		t.Fatalf("flush to the embedded broker = %d, %v", n, err)
	}
}
