package shop_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/jonboulle/clockwork"
	"github.com/segmentio/kafka-go"

	"github.com/waitroom/waitroom/examples/shop"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

// TestCheckoutAndKafkaShareTheStock: 15 admitted shoppers press "Place order"
// while the consumer takes 20 intents, for 20 in stock. Exactly 20 are sold
// between them; the rest are told sold out, and every shopper's slot is freed.
func TestCheckoutAndKafkaShareTheStock(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const stock, shoppers, intents = 20, 15, 20

	keys, _ := token.Generate()
	clock := clockwork.NewFakeClockAt(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	line := queue.NewLine(redisstore.New(redistest.Shared(t).Client(t), redistest.Prefix(t)), keys,
		queue.LineOptions{Clock: clock})
	settings := queue.DefaultSettings()
	settings.JitterMS, settings.BatchSize = 0, 100 // all admitted at once
	if err := line.PutRoom(ctx, "demo", settings); err != nil {
		t.Fatal(err)
	}
	brokers := startBroker(t)
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	defer ts.Close()
	keys.Issuer = ts.URL
	sh, err := shop.Open(ctx, shop.Config{WaitroomURL: ts.URL, Room: "demo", Now: clock.Now, Logger: testLogger(t),
		DataDir: t.TempDir(), Stock: stock,
		KafkaBrokers: brokers, IntentsTopic: intentsTopic, ResultsTopic: resultsTopic,
		GroupID: "shop-" + t.Name(), BatchSize: 4, Interval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	mux.Handle("/shop", sh.Handler())
	mux.Handle("/shop/", sh.Handler())
	mux.Handle("/", server.New(line, server.Config{AdminToken: "admin-token-0123456789"}))

	// Each shopper is admitted and opens checkout, as the redirect would.
	browsers := make([]*http.Client, shoppers)
	for i := range browsers {
		var code int
		var status string
		browsers[i], code, status = admit(t, ctx, line, ts.URL, i)
		if code != 200 || status != "checkout" {
			t.Fatalf("shopper %d checkout: %d %s", i, code, status)
		}
	}
	var msgs []kafka.Message
	for i := range intents {
		msgs = append(msgs, orderIntent(i, 1))
	}
	produce(t, brokers, msgs...)
	results := resultReader(t, brokers)

	// Both at once: the consumer and every shopper's "Place order".
	cctx, stopConsumer := context.WithCancel(ctx)
	consumed := make(chan error, 1)
	go func() { consumed <- sh.RunConsumer(cctx) }()
	pages := make([]string, shoppers)
	var wg sync.WaitGroup
	for i, b := range browsers {
		wg.Go(func() {
			code, status := shopPage(t, b, "POST", ts.URL+"/shop/complete")
			if (status == "placed") != (code == 200) || (status == "sold_out") != (code == 409) {
				t.Errorf("shopper %d: %d %s", i, code, status)
			}
			pages[i] = status
		})
	}
	answers := byID(t, readResults(t, results, intents))
	wg.Wait()
	stopConsumer()
	if err := <-consumed; err != nil {
		t.Fatal(err)
	}

	placed, soldOut := 0, 0
	for _, p := range pages {
		switch p {
		case "placed":
			placed++
		case "sold_out":
			soldOut++
		}
	}
	processed := count(answers, shop.ResultProcessed, "")
	rejected := count(answers, shop.ResultRejected, shop.ReasonSoldOut)
	t.Logf("checkout placed %d, kafka processed %d", placed, processed)
	if placed+processed != stock || soldOut+rejected != shoppers+intents-stock {
		t.Fatalf("checkout %d placed, %d sold out; kafka %d processed, %d sold out; want %d sold in all",
			placed, soldOut, processed, rejected, stock)
	}
	if sold, _ := sh.Store().Sold(ctx, shop.DropID); sold != stock || stockOf(t, sh.Store(), shop.DropID) != 0 {
		t.Fatalf("store: sold %d, left %d", sold, stockOf(t, sh.Store(), shop.DropID))
	}
	st, _ := line.Stats(ctx, "demo", clock.Now())
	if st.Active != 0 || st.CompletedTotal != shoppers {
		t.Fatalf("slots not all freed, sold out ones included: %+v", st)
	}
	// The next shopper is told at once, before pressing anything.
	if _, code, status := admit(t, ctx, line, ts.URL, shoppers); code != 200 || status != "sold_out" {
		t.Fatalf("after the drop: %d %s", code, status)
	}
}

// admit lets shopper i in and opens checkout with the token, as waitroom's
// redirect would: the browser keeps it, and the page it lands on is returned.
func admit(t *testing.T, ctx context.Context, line *queue.Line, base string, i int) (*http.Client, int, string) {
	t.Helper()
	tk, _, err := line.Enter(ctx, "demo", fmt.Sprintf("v:%032x", i))
	if err != nil || tk.State != vocab.StateAdmitted {
		t.Fatalf("enter %d: %+v %v", i, tk, err)
	}
	tok, _ := line.Token(tk)
	jar, _ := cookiejar.New(nil)
	b := &http.Client{Jar: jar}
	code, status := shopPage(t, b, "GET", base+"/shop?wr_token="+tok)
	return b, code, status
}

// shopPage fetches a shop page and returns its status code and data-status.
func shopPage(t *testing.T, b *http.Client, method, url string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	res, err := b.Do(req)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer res.Body.Close()
	doc, err := goquery.NewDocumentFromReader(res.Body)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	return res.StatusCode, doc.Find(`[data-testid="shop"]`).AttrOr("data-status", "")
}
