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

func intentMsg(t *testing.T, id, visitor string, at time.Time) kafka.Message {
	t.Helper()
	v, err := json.Marshal(outbox.IntentMessage{IntentID: id, Room: "sale", Visitor: visitor, Payload: json.RawMessage(`{}`), AcceptedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	return kafka.Message{Topic: outbox.DefaultIntentsTopic, Value: v}
}

func viewResult(t *testing.T, id, status string) kafka.Message {
	t.Helper()
	v, _ := json.Marshal(outbox.ResultMessage{IntentID: id, Status: status})
	return kafka.Message{Topic: outbox.DefaultResultsTopic, Value: v}
}

// TestViewIsBoundedBySizeAndAge: the view of every server's intents holds
// at most MaxIntents (the oldest seen go first) and none older than
// MaxAge, in memory: it has no file, so it cannot fill the outbox's disk.
func TestViewIsBoundedBySizeAndAge(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	v, err := outbox.OpenView(outbox.ViewConfig{Brokers: []string{"127.0.0.1:1"}, GroupID: "view", Logger: quiet,
		MaxIntents: 3, MaxAge: time.Hour, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v.Apply(intentMsg(t, "old", "v0", now.Add(-2*time.Hour))) // accepted longer ago than MaxAge: never kept
	for i := range 5 {
		v.Apply(intentMsg(t, fmt.Sprintf("i%d", i), fmt.Sprintf("v%d", i), now))
	}
	if n := v.Len(); n != 3 {
		t.Fatalf("view holds %d intents, want 3", n)
	}
	for _, id := range []string{"old", "i0", "i1"} {
		if _, err := v.Get(ctx, id); !errors.Is(err, outbox.ErrNotFound) {
			t.Errorf("%s still in the view: %v", id, err)
		}
	}
	if in, ok := v.Find("sale", "v4"); !ok || in.ID != "i4" || in.Status != outbox.StatusPublished {
		t.Fatalf("find v4: %+v %v", in, ok)
	}
	if _, ok := v.Find("sale", "v0"); ok {
		t.Fatal("a dropped intent is still found by its visitor")
	}

	// A rejected intent frees its visitor; a processed one stays theirs.
	v.Apply(viewResult(t, "i3", outbox.ResultRejected))
	v.Apply(viewResult(t, "i4", outbox.ResultProcessed))
	if _, ok := v.Find("sale", "v3"); ok {
		t.Error("a rejected intent still holds its visitor")
	}
	if in, ok := v.Find("sale", "v4"); !ok || in.Status != outbox.StatusProcessed {
		t.Errorf("processed intent: %+v %v", in, ok)
	}

	// An hour on, everything seen then is past MaxAge.
	now = now.Add(time.Hour + time.Second)
	v.Apply(intentMsg(t, "new", "v9", now))
	if n := v.Len(); n != 1 {
		t.Fatalf("after MaxAge the view holds %d intents, want only the new one", n)
	}
}
