package shop_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/waitroom/waitroom/examples/shop"
)

func openStore(t *testing.T, stock int) (*shop.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shop.db")
	st, err := shop.OpenStore(context.Background(), path, shop.Product{ID: "drop", Name: "Drop", Price: "₩1", Stock: stock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, path
}

func stockOf(t *testing.T, st *shop.Store, id string) int {
	t.Helper()
	p, err := st.Product(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return p.Stock
}

// TestPlaceOrderIsIdempotent: a key gets one answer for good, sold out
// included, and the answer survives reopening the file.
func TestPlaceOrderIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, path := openStore(t, 3)

	out, err := st.PlaceOrder(ctx, "a", "drop", 2, shop.SourceKafka)
	if err != nil || out.Status != shop.StatusPlaced || out.Replayed {
		t.Fatalf("first: %+v %v", out, err)
	}
	// The replay asks for more than is left: it still gets its first answer.
	out, err = st.PlaceOrder(ctx, "a", "drop", 2, shop.SourceKafka)
	if err != nil || out.Status != shop.StatusPlaced || !out.Replayed || out.Quantity != 2 {
		t.Fatalf("replay: %+v %v", out, err)
	}
	if n := stockOf(t, st, "drop"); n != 1 {
		t.Fatalf("stock after a replay: %d, want 1", n)
	}
	// The same key from the other source is another request.
	if out, err := st.PlaceOrder(ctx, "a", "drop", 2, shop.SourceCheckout); err != nil || out.Status != shop.StatusSoldOut || out.Replayed {
		t.Fatalf("other source: %+v %v", out, err)
	}
	if out, err := st.PlaceOrder(ctx, "b", "drop", 1, shop.SourceCheckout); err != nil || out.Status != shop.StatusPlaced {
		t.Fatalf("last one: %+v %v", out, err)
	}
	// Sold out is recorded too: "a" from checkout stays refused though
	// nothing changed, and would stay so if stock came back.
	if out, err := st.PlaceOrder(ctx, "a", "drop", 1, shop.SourceCheckout); err != nil || out.Status != shop.StatusSoldOut || !out.Replayed {
		t.Fatalf("sold-out replay: %+v %v", out, err)
	}

	for _, bad := range []struct {
		key, product string
		qty          int
	}{{"c", "drop", 0}, {"c", "drop", 6}, {"c", "nope", 1}, {"", "drop", 1}} {
		if _, err := st.PlaceOrder(ctx, bad.key, bad.product, bad.qty, shop.SourceKafka); !errors.Is(err, shop.ErrInvalidOrder) {
			t.Errorf("%+v: %v, want ErrInvalidOrder", bad, err)
		}
	}

	st.Close()
	// Reopened with another seed: the file's stock and answers stand.
	st2, err := shop.OpenStore(ctx, path, shop.Product{ID: "drop", Name: "Drop", Price: "₩1", Stock: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if n := stockOf(t, st2, "drop"); n != 0 {
		t.Fatalf("stock after reopening: %d, want 0", n)
	}
	if out, err := st2.PlaceOrder(ctx, "a", "drop", 2, shop.SourceKafka); err != nil || out.Status != shop.StatusPlaced || !out.Replayed {
		t.Fatalf("replay after reopening: %+v %v", out, err)
	}
}

// TestPlaceOrderNeverOversells: 300 concurrent orders from both sources, a
// fifth of them repeats of earlier keys, against 100 in stock.
func TestPlaceOrderNeverOversells(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const stock, unique, repeats = 100, 240, 60
	st, _ := openStore(t, stock)

	type call struct {
		key, source string
		out         shop.Outcome
		err         error
	}
	calls := make([]call, 0, unique+repeats)
	for i := range unique {
		src := shop.SourceKafka
		if i%2 == 0 {
			src = shop.SourceCheckout
		}
		calls = append(calls, call{key: fmt.Sprintf("k%03d", i), source: src})
	}
	for i := range repeats {
		calls = append(calls, calls[i*4]) // every fourth key twice
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range calls {
		wg.Go(func() {
			<-start
			c := &calls[i]
			c.out, c.err = st.PlaceOrder(ctx, c.key, "drop", 1, c.source)
		})
	}
	close(start)
	wg.Wait()

	placed, replayed := 0, 0
	first := map[string]string{}
	for _, c := range calls {
		if c.err != nil {
			t.Fatalf("%s: %v", c.key, c.err)
		}
		if c.out.Replayed {
			replayed++
		} else if c.out.Status == shop.StatusPlaced {
			placed++
		}
		if s, ok := first[c.source+c.key]; ok && s != c.out.Status {
			t.Errorf("%s: answered %s and %s", c.key, s, c.out.Status)
		}
		first[c.source+c.key] = c.out.Status
	}
	sold, err := st.Sold(ctx, "drop")
	if err != nil {
		t.Fatal(err)
	}
	if placed != stock || sold != stock || replayed != repeats || stockOf(t, st, "drop") != 0 {
		t.Fatalf("placed %d, sold %d, replayed %d, left %d; want %d, %d, %d, 0",
			placed, sold, replayed, stockOf(t, st, "drop"), stock, stock, repeats)
	}
}
