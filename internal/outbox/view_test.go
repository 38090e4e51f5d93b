package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/waitroom/waitroom/internal/outbox"
)

// TestTwoServersSeeEveryResult: two servers (two outboxes, each with its
// own results group and view) and one broker. Intents taken on either are
// answered by a checkout that reads the intents topic; every intent's
// result is then visible from both servers, to its own visitor only, and
// none is lost (a shared results group would hand each result to one
// server, which drops the results of intents it does not hold).
func TestTwoServersSeeEveryResult(t *testing.T) {
	br := startBroker(t)
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	servers := make([]*outbox.Outbox, 2)
	done := make(chan struct{}, 2)
	for i := range servers {
		ob, err := outbox.Open(outbox.Config{Dir: t.TempDir(), Brokers: br.Addrs(), Logger: quiet,
			ResultsGroup: fmt.Sprintf("results-%d", i), ViewGroup: fmt.Sprintf("view-%d", i),
			RetryInterval: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		servers[i] = ob
		go func() { _ = ob.Run(ctx); done <- struct{}{} }()
	}
	t.Cleanup(func() {
		cancel()
		<-done
		<-done
		for _, ob := range servers {
			_ = ob.Close()
		}
	})

	const n = 8
	type taken struct{ id, visitor string }
	var all []taken
	for i := range n {
		visitor := fmt.Sprintf("v%d", i)
		in, _, err := servers[i%2].Accept(ctx, "sale", visitor, payload(i))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, taken{in.ID, visitor})
	}
	// Checkout: reads every intent, rejects the odd ones.
	var results []kafka.Message
	for _, m := range br.Read(t, outbox.DefaultIntentsTopic, n) {
		var in outbox.IntentMessage
		if err := json.Unmarshal(m.Value, &in); err != nil {
			t.Fatal(err)
		}
		res := outbox.ResultMessage{IntentID: in.IntentID, Status: outbox.ResultProcessed}
		if in.Visitor[1]%2 == 1 {
			res = outbox.ResultMessage{IntentID: in.IntentID, Status: outbox.ResultRejected, Reason: "sold_out"}
		}
		v, _ := json.Marshal(res)
		results = append(results, kafka.Message{Key: []byte(in.IntentID), Value: v})
	}
	br.Write(t, outbox.DefaultResultsTopic, results...)

	for _, tk := range all {
		for s, ob := range servers {
			for {
				in, err := ob.Get(ctx, tk.id)
				if err == nil && in.Visitor != tk.visitor {
					t.Fatalf("server %d: intent %s is %s's, want %s's", s, tk.id, in.Visitor, tk.visitor)
				}
				if err == nil && !in.Status.Open() {
					want := outbox.StatusProcessed
					if tk.visitor[1]%2 == 1 {
						want = outbox.StatusRejected
					}
					if in.Status != want || in.Room != "sale" || in.Visitor != tk.visitor {
						t.Fatalf("server %d: intent of %s: %+v, want %s", s, tk.visitor, in, want)
					}
					break
				}
				if err != nil && !errors.Is(err, outbox.ErrNotFound) {
					t.Fatalf("server %d: %v", s, err)
				}
				if ctx.Err() != nil {
					t.Fatalf("server %d never saw the result of %s's intent: %+v %v", s, tk.visitor, in, err)
				}
				time.Sleep(20 * time.Millisecond) // the view fills from Kafka in its own time: nothing to await
			}
		}
	}
}
