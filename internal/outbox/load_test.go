package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/internal/testkit/kafkatest"
)

// node is the outbox side of one process lifetime: store, relay and
// results consumer on the one outbox file.
type node struct {
	s     *outbox.SQLiteStore
	relay *outbox.Relay
	stop  func()
}

func startNode(t *testing.T, path string, br *kafkatest.Broker, progress chan<- struct{}) *node {
	t.Helper()
	s, err := outbox.OpenSQLite(path, outbox.SQLiteOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := outbox.NewKafkaPublisher(outbox.KafkaConfig{Brokers: br.Addrs(), WriteTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Real time with short waits: this test is about losing nothing, the
	// retry timing has its own test on a fake clock.
	relay := outbox.NewRelay(s, pub, outbox.RelayConfig{Interval: 200 * time.Millisecond, MinBackoff: 20 * time.Millisecond, Logger: quiet})
	results, err := outbox.NewResultConsumer(s, outbox.ResultsConfig{
		Brokers: br.Addrs(), Logger: quiet, SessionTimeout: 2 * time.Second,
		OnApply: func(int, int) {
			select {
			case progress <- struct{}{}:
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{relay.Run, results.Run} {
		wg.Go(func() {
			if err := run(ctx); err != nil {
				t.Errorf("node loop: %v", err)
			}
		})
	}
	return &node{s: s, relay: relay, stop: func() {
		// The outbox goes first, as in a crash: accepts in flight fail
		// with ErrClosed and the loops stop on it.
		if err := s.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
		cancel()
		wg.Wait()
		if err := pub.Close(); err != nil {
			t.Errorf("stop node: %v", err)
		}
	}}
}

// shop is the test's stand-in for checkout: it reads intents in a consumer
// group, drops intent ids it has seen, rejects every 7th new one, answers
// on the results topic and then commits its offsets.
type shop struct {
	mu         sync.Mutex
	verdict    map[string]string // intent id -> status, set once
	handled    map[string]int    // intent id -> times processed (must be 1)
	deliveries int
}

func (sh *shop) run(ctx context.Context, t *testing.T, br *kafkatest.Broker) {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: br.Addrs(), GroupID: "shop", Topic: outbox.DefaultIntentsTopic,
		StartOffset: kafka.FirstOffset, MaxWait: 100 * time.Millisecond,
		HeartbeatInterval: 200 * time.Millisecond, SessionTimeout: 2 * time.Second, RebalanceTimeout: 2 * time.Second,
		JoinGroupBackoff: 100 * time.Millisecond, ReadBackoffMax: 200 * time.Millisecond,
	})
	defer r.Close()
	w := &kafka.Writer{
		Addr: kafka.TCP(br.Addrs()...), Topic: outbox.DefaultResultsTopic,
		Balancer: &kafka.Hash{}, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond,
		MaxAttempts: 2, WriteBackoffMin: 10 * time.Millisecond, WriteBackoffMax: 50 * time.Millisecond,
	}
	defer w.Close()

	msgs := make(chan kafka.Message, 512)
	go func() {
		defer close(msgs)
		for {
			m, err := r.FetchMessage(ctx)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				continue // a broker went away; kafka-go reconnects and backs off
			}
			select {
			case msgs <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	seq := 0
	for m := range msgs {
		batch := []kafka.Message{m}
	more:
		for len(batch) < 512 {
			select {
			case m, ok := <-msgs:
				if !ok {
					break more
				}
				batch = append(batch, m)
			default:
				break more
			}
		}
		out := make([]kafka.Message, 0, len(batch))
		sh.mu.Lock()
		for _, m := range batch {
			sh.deliveries++
			id := header(m, outbox.HeaderIntentID)
			var im outbox.IntentMessage
			if err := json.Unmarshal(m.Value, &im); err != nil || im.IntentID != id {
				t.Errorf("message %q with header %q: %v", m.Value, id, err)
			}
			status, seen := sh.verdict[id]
			if !seen {
				seq++
				status = outbox.ResultProcessed
				if seq%7 == 0 {
					status = outbox.ResultRejected
				}
				sh.verdict[id] = status
				sh.handled[id]++
			}
			// A duplicate gets its first answer again: harmless, and it
			// exercises the outbox ignoring repeated results.
			v, _ := json.Marshal(outbox.ResultMessage{IntentID: id, Status: status, Reason: map[bool]string{true: "every 7th"}[status == outbox.ResultRejected]})
			out = append(out, kafka.Message{Key: []byte(id), Value: v})
		}
		sh.mu.Unlock()
		// Answer, then commit: a crash in between answers again.
		for {
			err := w.WriteMessages(ctx, out...)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return
			}
			select { // the broker is down: retry shortly
			case <-ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
		_ = r.CommitMessages(ctx, batch...) // a lost commit only means duplicates
	}
}

// 10,000 intents from concurrent submitters while the broker stops and
// comes back and the outbox is closed and reopened: every accepted intent
// ends processed or rejected, and the shop handles each exactly once.
func TestLoadNothingLostNothingTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	const (
		total      = 10000
		submitters = 64
		phase      = total / 4
	)
	// Generous: under -race, beside other packages' tests, on 2 cores this
	// takes 15-30 s; without -race about 2 s.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	br := startBroker(t)
	path := dbPath(t)
	progress := make(chan struct{}, 1)

	var (
		mu      sync.Mutex
		cur     = startNode(t, path, br, progress)
		swapped = make(chan struct{}) // closed when cur is replaced
	)
	current := func() (*node, <-chan struct{}) {
		mu.Lock()
		defer mu.Unlock()
		return cur, swapped
	}
	t.Cleanup(func() { cur.stop() })

	shopCtx, stopShop := context.WithCancel(context.Background())
	sh := &shop{verdict: map[string]string{}, handled: map[string]int{}}
	shopDone := make(chan struct{})
	go func() { defer close(shopDone); sh.run(shopCtx, t, br) }()
	t.Cleanup(func() { stopShop(); <-shopDone })

	var (
		idsMu     sync.Mutex
		ids       = make(map[string]string, total) // intent id -> visitor
		accepted  atomic.Int64
		retried   atomic.Int64
		midSwap   = make(chan struct{})
		midSwapAt = int64(2*phase + phase/2)
		once      sync.Once
	)
	// submit accepts intents from..to-1 from concurrent submitters, as the
	// HTTP handlers would; one that meets a closed outbox tries the next.
	submit := func(from, to int) {
		var wg sync.WaitGroup
		next := atomic.Int64{}
		next.Store(int64(from))
		for range submitters {
			wg.Go(func() {
				for {
					i := int(next.Add(1) - 1)
					if i >= to {
						return
					}
					visitor := fmt.Sprintf("visitor-%d", i)
					for {
						n, swap := current()
						in, created, err := n.s.Accept(ctx, "drop", visitor, payload(i))
						if errors.Is(err, outbox.ErrClosed) {
							retried.Add(1)
							select {
							case <-swap:
							case <-ctx.Done():
								t.Error("no outbox to retry on")
								return
							}
							continue
						}
						if err != nil || !created {
							t.Errorf("accept %s: created %v, %v", visitor, created, err)
							return
						}
						n.relay.Kick()
						idsMu.Lock()
						ids[in.ID] = visitor
						idsMu.Unlock()
						break
					}
					if accepted.Add(1) == midSwapAt {
						once.Do(func() { close(midSwap) })
					}
				}
			})
		}
		t0 := time.Now()
		wg.Wait()
		t.Logf("accepts %d-%d took %v", from, to, time.Since(t0))
	}

	start := time.Now()
	submit(0, phase)
	br.Stop()
	submit(phase, 2*phase) // all of these wait in the outbox
	if c, _ := cur.s.Counts(ctx); c.Accepted < phase {
		t.Errorf("with the broker down only %d intents wait; want at least %d", c.Accepted, phase)
	}

	// Bring the broker back while submitters run, and, mid-way, stop the
	// outbox and open it again on the same file as a restarted process would.
	swapDone := make(chan struct{})
	go func() {
		defer close(swapDone)
		br.Restart()
		select {
		case <-midSwap:
		case <-ctx.Done():
			return
		}
		old, _ := current()
		t0 := time.Now()
		old.stop()
		n := startNode(t, path, br, progress)
		t.Logf("outbox closed and reopened in %v", time.Since(t0))
		mu.Lock()
		cur = n
		close(swapped)
		swapped = make(chan struct{})
		mu.Unlock()
	}()
	submit(2*phase, total)
	<-swapDone
	acceptTime := time.Since(start)

	// Wait for the shop's answers to be applied to all of them. The results
	// consumer signals after each batch it applied; a signal that comes
	// while the counts are read stays in the channel for the next round.
	var c outbox.Counts
	for {
		n, _ := current()
		c, _ = n.s.Counts(ctx)
		if c.Processed+c.Rejected >= total {
			break
		}
		select {
		case <-progress:
		case <-ctx.Done():
			sh.mu.Lock()
			d, h := sh.deliveries, len(sh.handled)
			sh.mu.Unlock()
			t.Fatalf("outbox counts %+v after %v; want %d finished (shop: %d deliveries, %d handled)", c, time.Since(start), total, d, h)
		}
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	t.Logf("accepted %d in %v (%d accepts retried after the outbox closed); all finished after %v; %d deliveries for %d intents",
		total, acceptTime, retried.Load(), time.Since(start), sh.deliveries, total)

	if len(ids) != total {
		t.Fatalf("%d distinct intent ids for %d accepts", len(ids), total)
	}
	if c.Total() != total || c.Accepted != 0 || c.Published != 0 {
		t.Fatalf("counts = %+v; want all %d processed or rejected", c, total)
	}
	n, _ := current()
	states, err := n.s.States(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != total {
		t.Errorf("outbox holds %d intents, want %d", len(states), total)
	}
	rejected := 0
	for id := range ids {
		if sh.handled[id] != 1 {
			t.Errorf("intent %s handled %d times", id, sh.handled[id])
		}
		if string(states[id]) != sh.verdict[id] {
			t.Errorf("intent %s: outbox says %q, shop said %q", id, states[id], sh.verdict[id])
		}
		if sh.verdict[id] == outbox.ResultRejected {
			rejected++
		}
	}
	if len(sh.handled) != total || int64(rejected) != c.Rejected || rejected != total/7 {
		t.Errorf("shop handled %d intents, rejected %d; outbox has %d rejected; want %d and %d", len(sh.handled), rejected, c.Rejected, total, total/7)
	}
}
