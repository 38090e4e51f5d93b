package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/waitroom/waitroom/examples/shop"
	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/internal/testkit"
	"github.com/waitroom/waitroom/internal/testkit/kafkatest"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
)

// threeServers is one deployment: three servers on one real redis-server
// and one Kafka-protocol broker, the room "sale" cached on each.
func threeServers(t *testing.T, room string) ([]*degradedEnv, *kafkatest.Broker) {
	t.Helper()
	rs := redistest.Start(t)
	broker := kafkatest.Start(t, outbox.DefaultIntentsTopic, outbox.DefaultResultsTopic)
	keys, _ := token.Generate()
	prefix := redistest.Prefix(t)
	var servers []*degradedEnv
	for _, id := range []string{"a", "b", "c"} {
		servers = append(servers, newDegradedServer(t, rs, broker.Addrs(), keys, prefix, id, nil))
	}
	servers[0].putRoom("sale", room)
	for _, s := range servers {
		waitCached(t, s)
	}
	return servers, broker
}

func waitCached(t *testing.T, s *degradedEnv) {
	t.Helper()
	testkit.Eventually(t, 5*time.Second, func() error { // the admission loop caches it: nothing to await
		if _, ok := s.line.CachedSettings("sale"); ok {
			return nil
		}
		return errors.New("room never cached")
	})
}

// drill switches every server of the deployment in or out of degraded mode.
func drill(t *testing.T, servers []*degradedEnv, on bool) {
	t.Helper()
	body, want := `{"on": true}`, "bypassed"
	if !on {
		body, want = `{"on": false}`, ""
	}
	if r := servers[0].admin("POST", "/admin/api/degrade", body); r.status != 200 {
		t.Fatalf("drill %v: %d %s", on, r.status, r.raw)
	}
	for _, s := range servers {
		for start := time.Now(); s.avail.Degraded() != on; time.Sleep(20 * time.Millisecond) { // broadcast through Redis
			if time.Since(start) > 10*time.Second {
				t.Fatalf("%s: degraded never became %v (%s)", s.url, on, want)
			}
		}
	}
}

// TestOneVisitorsIntentsOnThreeServersAreOneOrder: the same visitor (one
// cookie, no sticky sessions) leaves intents on three servers. Once the
// first is in Kafka, the others answer it: the same intent_id and its
// status. Where the servers race (all three at once, before any reads the
// others' back), each intent carries the same idempotency key, and the
// shop's checkout, deduping on it, places one order per visitor.
func TestOneVisitorsIntentsOnThreeServersAreOneOrder(t *testing.T) {
	t.Parallel()
	servers, broker := threeServers(t, `{"product_id": "drop", "capacity": 1, "paused": true}`)
	a := servers[0]
	patient, racer := a.browser(), a.browser()
	for _, c := range []*http.Client{patient, racer} {
		if r := a.do(c, "POST", "/api/rooms/sale/enter", ""); r.status != 200 || r.body["state"] != "waiting" {
			t.Fatalf("enter: %d %s", r.status, r.raw)
		}
	}
	drill(t, servers, true)

	// One after the other: the first, then the same on b and c once they read it back.
	first := a.do(patient, "POST", "/api/rooms/sale/intents", `{"payload": {"product": "drop", "quantity": 1}}`)
	if first.status != 202 {
		t.Fatalf("first intent: %d %s", first.status, first.raw)
	}
	id := first.body["intent_id"].(string)
	for _, s := range servers[1:] {
		testkit.Eventually(t, 20*time.Second, func() error { // the view fills from Kafka: nothing to await
			if r := s.do(patient, "GET", "/api/intents/"+id, ""); r.status == 200 {
				return nil
			}
			return fmt.Errorf("%s never read intent %s back", s.url, id)
		})
		r := s.do(patient, "POST", "/api/rooms/sale/intents", `{"payload": {"product": "drop", "quantity": 2}}`)
		if r.status != 202 || r.body["intent_id"] != id || r.body["status"] != "published" {
			t.Fatalf("%s: second intent of the same visitor: %d %s; want 202 with %s, published", s.url, r.status, r.raw, id)
		}
	}

	// At once on all three.
	var wg sync.WaitGroup
	ids := make([]string, len(servers))
	for i, s := range servers {
		wg.Go(func() {
			r := s.do(racer, "POST", "/api/rooms/sale/intents", `{"payload": {"product": "drop", "quantity": 1}}`)
			if r.status != 202 {
				t.Errorf("%s: racing intent: %d %s", s.url, r.status, r.raw)
				return
			}
			ids[i] = r.body["intent_id"].(string)
		})
	}
	wg.Wait()
	distinct := map[string]bool{}
	for _, id := range ids {
		distinct[id] = true
	}
	t.Logf("racing intents of one visitor on three servers: %d intent ids", len(distinct))

	// Checkout reads every intent and places orders through the shop's own store.
	st, err := shop.OpenStore(context.Background(), "", shop.Product{ID: "drop", Name: "Drop", Price: "1", Stock: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	msgs := broker.Read(t, outbox.DefaultIntentsTopic, 1+len(distinct))
	keys := map[string]string{} // visitor → key
	for _, m := range msgs {
		var in outbox.IntentMessage
		if err := json.Unmarshal(m.Value, &in); err != nil {
			t.Fatal(err)
		}
		if k, ok := keys[in.Visitor]; ok && k != in.IdempotencyKey {
			t.Fatalf("visitor %s has two idempotency keys: %s, %s", in.Visitor, k, in.IdempotencyKey)
		}
		keys[in.Visitor] = in.IdempotencyKey
		if string(m.Key) != string(outbox.MessageKey(in.Room, in.Visitor)) {
			t.Errorf("message key %q, want room/visitor", m.Key)
		}
		if _, err := st.PlaceOrder(context.Background(), in.IdempotencyKey, "drop", 1, shop.SourceKafka); err != nil {
			t.Fatal(err)
		}
	}
	if len(keys) != 2 {
		t.Fatalf("%d visitors in the intents topic, want 2", len(keys))
	}
	p, _ := st.Product(context.Background(), "drop")
	if sold := 10 - p.Stock; sold != 2 {
		t.Fatalf("%d orders placed for 2 visitors (%d messages)", sold, len(msgs))
	}
}

// TestAcceptedIntentIsTheOrder: a visitor who left an intent while the line
// was down is not admitted to checkout when it is back (state ordered, on
// every server); once checkout rejects the intent, they are, from the
// place they had.
func TestAcceptedIntentIsTheOrder(t *testing.T) {
	t.Parallel()
	servers, broker := threeServers(t, `{"product_id": "drop", "capacity": 5, "paused": true}`)
	a, b := servers[0], servers[1]
	shopper := a.browser()
	entered := a.do(shopper, "POST", "/api/rooms/sale/enter", "")
	if entered.status != 200 || entered.body["state"] != "waiting" {
		t.Fatalf("enter: %d %s", entered.status, entered.raw)
	}
	ticket := entered.body["ticket"]
	drill(t, servers, true)
	r := a.do(shopper, "POST", "/api/rooms/sale/intents", `{"payload": {"product": "drop", "quantity": 1}}`)
	if r.status != 202 {
		t.Fatalf("intent: %d %s", r.status, r.raw)
	}
	id := r.body["intent_id"].(string)
	broker.Read(t, outbox.DefaultIntentsTopic, 1) // published: every server's view reads it
	drill(t, servers, false)
	if r := a.admin("PATCH", "/admin/api/rooms/sale", `{"paused": false}`); r.status != 200 {
		t.Fatalf("unpause: %d %s", r.status, r.raw)
	}

	for _, s := range servers {
		testkit.Eventually(t, 20*time.Second, func() error { // b and c learn it from Kafka
			r := s.do(shopper, "POST", "/api/rooms/sale/enter", "")
			if r.body["state"] == "ordered" {
				if r.body["intent_id"] != id || r.body["token"] != nil {
					t.Fatalf("%s: ordered answer %s, want intent %s and no token", s.url, r.raw, id)
				}
				return nil
			}
			if r.body["state"] == "admitted" {
				t.Fatalf("%s: a visitor with an accepted intent was admitted: %s", s.url, r.raw)
			}
			return fmt.Errorf("%s: never answered ordered: %s", s.url, r.raw)
		})
	}
	// The room page sends them to their intent's page, which keeps them there.
	noRedirect := &http.Client{Jar: shopper.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", b.url+"/rooms/sale", nil)
	req.Header.Set("Accept", "text/html")
	res, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if loc := res.Header.Get("Location"); res.StatusCode != 303 || loc != "/rooms/sale/accept?intent="+id+"&lang=en&ordered=1" {
		t.Fatalf("room page: %d to %q", res.StatusCode, loc)
	}

	// Checkout rejects it: the visitor is back in line with the ticket they had, and admitted.
	v, _ := json.Marshal(outbox.ResultMessage{IntentID: id, Status: outbox.ResultRejected, Reason: "sold_out"})
	broker.Write(t, outbox.DefaultResultsTopic, kafka.Message{Key: []byte(id), Value: v})
	for _, s := range servers {
		testkit.Eventually(t, 20*time.Second, func() error { // the result comes through Kafka, then a tick
			r := s.do(shopper, "POST", "/api/rooms/sale/enter", "")
			if r.body["state"] == "admitted" {
				if r.body["ticket"] != ticket {
					t.Fatalf("%s: admitted on ticket %v, want the one from before (%v)", s.url, r.body["ticket"], ticket)
				}
				if r.body["token"] == nil {
					t.Fatalf("%s: admitted without a token: %s", s.url, r.raw)
				}
				return nil
			}
			return fmt.Errorf("%s: never admitted after the rejection: %s", s.url, r.raw)
		})
	}
}

// TestCheckoutAfterIntentAdmitsWithTheIntentClaim: a room that allows both
// admits a visitor with an accepted intent, and their entry token names
// the intent, so checkout can refuse a second order.
func TestCheckoutAfterIntentAdmitsWithTheIntentClaim(t *testing.T) {
	t.Parallel()
	e := newDegradedEnv(t)
	e.putRoom("sale", `{"product_id": "drop", "paused": true, "checkout_after_intent": true}`)
	waitCached(t, e)
	shopper := e.browser()
	if r := e.do(shopper, "POST", "/api/rooms/sale/enter", ""); r.body["state"] != "waiting" {
		t.Fatalf("enter: %s", r.raw)
	}
	drill(t, []*degradedEnv{e}, true)
	r := e.do(shopper, "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 1}}`)
	if r.status != 202 {
		t.Fatalf("intent: %d %s", r.status, r.raw)
	}
	id := r.body["intent_id"].(string)
	drill(t, []*degradedEnv{e}, false)
	if r := e.admin("PATCH", "/admin/api/rooms/sale", `{"paused": false}`); r.status != 200 {
		t.Fatalf("unpause: %d %s", r.status, r.raw)
	}
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) { // admitted by a tick
		r := e.do(shopper, "POST", "/api/rooms/sale/enter", "")
		if r.body["state"] == "admitted" {
			tok, _ := r.body["token"].(string)
			c, err := e.line.Keys().Verify(tok, e.line.Now().Add(time.Minute))
			if err != nil || c.Intent != id {
				t.Fatalf("token claims %+v (%v), want intent %s", c, err, id)
			}
			return
		}
		if r.body["state"] == "ordered" || time.Since(start) > 20*time.Second {
			t.Fatalf("not admitted with checkout_after_intent: %s", r.raw)
		}
	}
}
