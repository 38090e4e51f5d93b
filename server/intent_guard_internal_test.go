package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// FuzzCheckQuantity: any payload is either let through or refused with a
// 400 naming quantity; nothing panics.
func FuzzCheckQuantity(f *testing.F) {
	for _, seed := range []string{`{"quantity": 3}`, `{"quantity": 4}`, `{"quantity": "3"}`, `{"quantity": 1e400}`,
		`{"quantity": -1}`, `{"quantity": null}`, `{}`, `[1]`, `{"quantity": 99999999999999999999}`, `{"quantity": 2.0}`} {
		f.Add(seed, int64(3))
	}
	f.Fuzz(func(t *testing.T, payload string, most int64) {
		s := queue.Settings{MaxQuantity: most}
		err := checkQuantity(s, json.RawMessage(payload))
		if err == nil {
			return
		}
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != 400 || ae.Field != "quantity" || most <= 0 {
			t.Fatalf("payload %q, max %d: %v", payload, most, err)
		}
	})
}

func FuzzValidHolder(f *testing.F) {
	for _, seed := range []string{"v:0123456789abcdef0123456789abcdef", "", "<script>", "a b", string(make([]byte, 129))} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if !validHolder(h) {
			return
		}
		if len(h) > 128 {
			t.Fatalf("%d characters accepted", len(h))
		}
		for _, r := range h {
			if r > 0x7e || r <= ' ' {
				t.Fatalf("%q accepted", h)
			}
		}
	})
}

// The per-server intent limits forget clients, so a flood of addresses
// cannot grow them without bound.
func TestIntentLimitsStayBounded(t *testing.T) {
	l := newIntentLimits(100)
	s := queue.Settings{BotProtection: queue.BotProtection{EntersPerIPPerMinute: 1}}
	now := time.Unix(0, 0)
	for i := range 1000 {
		now = now.Add(time.Millisecond)
		if _, err := l.reserve("sale", fmt.Sprintf("10.0.%d.%d", i/256, i%256), "v:x", &s, now); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		if len(l.clients) > 100 {
			t.Fatalf("%d clients remembered, want at most 100", len(l.clients))
		}
	}
	// A client's limit holds while it is remembered.
	r, err := l.reserve("sale", "10.9.9.9", "v:a", &s, now)
	if err != nil {
		t.Fatal(err)
	}
	r.created()
	if _, err := l.reserve("sale", "10.9.9.9", "v:b", &s, now); !errors.Is(err, queue.ErrLimited) {
		t.Errorf("second new intent within the minute: %v, want limited", err)
	}
	if _, err := l.reserve("sale", "10.9.9.9", "v:a", &s, now); err != nil {
		t.Errorf("the visitor asking again for its intent: %v", err)
	}
}
