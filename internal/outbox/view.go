package outbox

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// Bounds of the view. It is held in memory, never on disk: the disk is the
// outbox's, and a view that grew on it could fill it (a 4 MB file system
// filled by the view alone refused every intent). It is rebuilt from Kafka
// at each start, so it can be dropped at will.
const (
	// DefaultViewMaxIntents bounds the intents the view holds; the oldest
	// seen go first. ~250 bytes each: 100,000 are ~25 MB of memory.
	DefaultViewMaxIntents = 100_000
	// DefaultViewMaxAge: intents accepted longer ago are forgotten
	// (degraded mode is an outage's worth of orders, not an archive).
	DefaultViewMaxAge = 24 * time.Hour
)

// View is every server's intents as Kafka carries them, so any server
// answers GET /api/intents/{id} and finds a visitor's intent taken on
// another server: entries come from the intents topic (room, visitor) and
// the results topic (status), in whichever order they arrive. It reads both
// topics from the start in a consumer group of this server's own and never
// commits offsets, so each start rebuilds it.
type View struct {
	rc       kafka.ReaderConfig
	log      *slog.Logger
	now      func() time.Time
	maxItems int
	maxAge   time.Duration

	mu        sync.Mutex
	byID      map[string]*list.Element // of *viewEntry
	byVisitor map[string]*list.Element // MessageKey(room, visitor) → its latest intent
	order     *list.List               // oldest seen first
}

type viewEntry struct {
	in     Intent
	seenAt time.Time
}

// ViewConfig says where the view's messages come from and how much it keeps.
type ViewConfig struct {
	Brokers      []string
	IntentsTopic string
	ResultsTopic string
	GroupID      string // this server's own group: every server reads every message
	Auth         KafkaAuth
	Logger       *slog.Logger
	MaxIntents   int           // DefaultViewMaxIntents when 0
	MaxAge       time.Duration // DefaultViewMaxAge when 0
	Now          func() time.Time
}

// OpenView prepares the view; it reads Kafka only in Run.
func OpenView(cfg ViewConfig) (*View, error) {
	if len(cfg.Brokers) == 0 || cfg.GroupID == "" {
		return nil, errors.New("outbox: view: brokers and group are required")
	}
	if cfg.IntentsTopic == "" {
		cfg.IntentsTopic = DefaultIntentsTopic
	}
	if cfg.ResultsTopic == "" {
		cfg.ResultsTopic = DefaultResultsTopic
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxIntents <= 0 {
		cfg.MaxIntents = DefaultViewMaxIntents
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultViewMaxAge
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	rc := kafka.ReaderConfig{
		Brokers: cfg.Brokers, Dialer: cfg.Auth.Dialer(), GroupID: cfg.GroupID,
		GroupTopics: []string{cfg.IntentsTopic, cfg.ResultsTopic},
		StartOffset: kafka.FirstOffset, MinBytes: 1, MaxBytes: 4 << 20, MaxWait: 500 * time.Millisecond,
		JoinGroupBackoff: 500 * time.Millisecond,
		ErrorLogger: kafka.LoggerFunc(func(msg string, args ...any) {
			log.Debug("outbox: view: kafka", "msg", fmt.Sprintf(msg, args...))
		}),
	}
	if err := rc.Validate(); err != nil {
		return nil, fmt.Errorf("outbox: view: %w", err)
	}
	return &View{rc: rc, log: log, now: cfg.Now, maxItems: cfg.MaxIntents, maxAge: cfg.MaxAge,
		byID: map[string]*list.Element{}, byVisitor: map[string]*list.Element{}, order: list.New()}, nil
}

// Close is a no-op kept for symmetry; the view holds no file.
func (v *View) Close() error { return nil }

// Len is the number of intents the view holds.
func (v *View) Len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.order.Len()
}

// Get returns an intent as Kafka tells it: published until a result
// arrives. Payload is not kept.
func (v *View) Get(_ context.Context, id string) (Intent, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if el, ok := v.byID[id]; ok {
		if e := el.Value.(*viewEntry); e.in.Visitor != "" {
			return e.in, nil
		}
	}
	return Intent{}, fmt.Errorf("outbox: view: %w", ErrNotFound)
}

// Find returns the visitor's latest intent in room that checkout did not
// reject (ok false when none): the one a new intent must not duplicate.
func (v *View) Find(room, visitor string) (Intent, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	el, ok := v.byVisitor[string(MessageKey(room, visitor))]
	if !ok {
		return Intent{}, false
	}
	in := el.Value.(*viewEntry).in
	if in.Status == StatusRejected {
		return Intent{}, false
	}
	return in, true
}

// Run reads both topics until ctx ends.
func (v *View) Run(ctx context.Context) error {
	r := kafka.NewReader(v.rc)
	defer func() { _ = r.Close() }()
	for {
		// Fetch, never commit: the next start reads from the beginning again.
		m, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				return nil
			}
			v.log.Warn("outbox: view: read", "err", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(fetchRetry):
			}
			continue
		}
		v.apply(m)
	}
}

func (v *View) apply(m kafka.Message) {
	now := v.now()
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.prune(now)
	if m.Topic == v.rc.GroupTopics[0] {
		var in IntentMessage
		if err := json.Unmarshal(m.Value, &in); err != nil || in.IntentID == "" {
			return // not ours to judge; consumers skip it too
		}
		if now.Sub(in.AcceptedAt) > v.maxAge {
			return
		}
		e := v.entry(in.IntentID, now)
		e.in.Room, e.in.Visitor, e.in.AcceptedAt = in.Room, in.Visitor, in.AcceptedAt.UTC()
		key := string(MessageKey(in.Room, in.Visitor))
		// The visitor's latest intent: a rejected one gives way to a new one.
		if old, ok := v.byVisitor[key]; !ok || old.Value.(*viewEntry).in.Status == StatusRejected ||
			old.Value.(*viewEntry).in.AcceptedAt.After(e.in.AcceptedAt) {
			v.byVisitor[key] = v.byID[in.IntentID]
		}
		return
	}
	var res ResultMessage
	if err := json.Unmarshal(m.Value, &res); err != nil || res.IntentID == "" ||
		(res.Status != ResultProcessed && res.Status != ResultRejected) {
		return
	}
	e := v.entry(res.IntentID, now)
	// The first result wins, as in the outbox: a final status stays.
	if e.in.Status.Open() {
		e.in.Status, e.in.Reason = Status(res.Status), res.Reason
		if e.in.Status == StatusProcessed {
			e.in.Reason = ""
		}
	}
}

// entry returns the intent's entry, adding it (published) when new.
func (v *View) entry(id string, now time.Time) *viewEntry {
	if el, ok := v.byID[id]; ok {
		return el.Value.(*viewEntry)
	}
	e := &viewEntry{in: Intent{ID: id, Status: StatusPublished}, seenAt: now}
	v.byID[id] = v.order.PushBack(e)
	return e
}

// prune drops the oldest entries past either bound.
func (v *View) prune(now time.Time) {
	for el := v.order.Front(); el != nil; el = v.order.Front() {
		e := el.Value.(*viewEntry)
		if v.order.Len() <= v.maxItems && now.Sub(e.seenAt) <= v.maxAge {
			return
		}
		v.order.Remove(el)
		delete(v.byID, e.in.ID)
		key := string(MessageKey(e.in.Room, e.in.Visitor))
		if v.byVisitor[key] == el {
			delete(v.byVisitor, key)
		}
	}
}
